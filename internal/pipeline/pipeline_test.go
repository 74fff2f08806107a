package pipeline

import (
	"encoding/json"
	"reflect"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/test/gen"
	"github.com/google/go-cmp/cmp"
)

// TestDecodeMatches holds the parallel decode to model.Decode: the same
// set, in the same order, and the same results.
func TestDecodeMatches(t *testing.T) {
	for _, f := range reflect.VisibleFields(reflect.TypeFor[model.Set]()) {
		if f.Type.Kind() != reflect.Slice {
			t.Fatalf("model.Set.%s is not a slice: decode cannot merge it", f.Name)
		}
	}
	bad := func(name, apiVersion, kind, body string) model.Item {
		src := diag.Source{Ref: diag.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: "dns", Name: name}, File: "bad.yaml"}
		doc, _ := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": "dns"}})
		if body != "" {
			doc = []byte(body)
		}
		return model.Item{Source: src, JSON: doc}
	}
	big := gen.BenchItems(t, 10000)
	withErrors := append([]model.Item{}, big[:len(big)/2]...)
	withErrors = append(withErrors,
		bad("v", "bind.unkin.net/v9", "BindZone", ""),
		bad("k", "bind.unkin.net/v1alpha1", "BindNothing", ""),
		bad("f", "bind.unkin.net/v1alpha1", "DNSRecord", `{"apiVersion":"bind.unkin.net/v1alpha1","kind":"DNSRecord","metadata":{"name":"f"},"spec":{"bogus":1}}`),
		bad("j", "bind.unkin.net/v1alpha1", "BindZone", `{"spec":`))
	withErrors = append(withErrors, big[len(big)/2:]...)
	for name, tc := range map[string]struct {
		reason string
		items  []model.Item
		errors int
	}{
		"generated": {reason: "a 10k-record package, split over several chunks", items: big},
		"errors":    {reason: "decode errors in the middle keep their order", items: withErrors, errors: 4},
		"small":     {reason: "below the threshold: model.Decode itself", items: big[:10]},
	} {
		t.Run(name, func(t *testing.T) {
			wantSet, wantRs := model.Decode(tc.items)
			gotSet, gotRs := decode(tc.items)
			if d := cmp.Diff(wantSet, gotSet); d != "" {
				t.Errorf("%s: set (-model.Decode +decode):\n%s", tc.reason, d)
			}
			if len(wantRs) != tc.errors {
				t.Errorf("%s: model.Decode gave %d results, want %d: %v", tc.reason, len(wantRs), tc.errors, wantRs)
			}
			if d := cmp.Diff(wantRs, gotRs); d != "" {
				t.Errorf("%s: results (-model.Decode +decode):\n%s", tc.reason, d)
			}
		})
	}
}
