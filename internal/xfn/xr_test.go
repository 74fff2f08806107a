package xfn_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/xfn"
)

func TestLocatorField(t *testing.T) {
	var xr map[string]any
	if err := json.Unmarshal([]byte(minimalXR), &xr); err != nil {
		t.Fatal(err)
	}
	items, loc, rs := xfn.FromXR(xr)
	if len(rs) != 0 || len(items) != 3 {
		t.Fatalf("FromXR: %d items, results %v", len(items), rs)
	}
	zone := items[2].Source
	cases := map[string]struct {
		reason string
		r      diag.Result
		want   string
		inXR   bool
	}{
		"ClusterField":   {"the cluster's spec is the XR's spec", diag.Result{Source: items[0].Source, Field: "spec.replicas"}, "spec.replicas", true},
		"ZoneRecord":     {"a list entry's spec sits under spec.<list>[i].spec", diag.Result{Source: zone, Field: "spec.records[0].values[0]"}, "spec.zones[0].spec.records[0].values[0]", true},
		"ZoneName":       {"metadata.name is the entry's name", diag.Result{Source: zone, Field: "metadata.name"}, "spec.zones[0].name", true},
		"ZoneWhole":      {"a result about the whole object points at the entry", diag.Result{Source: zone}, "spec.zones[0]", true},
		"RequiredObject": {"a required object keeps its own paths", diag.Result{Source: diag.Source{Ref: diag.ObjectRef{Kind: "DNSRecord", Namespace: "dns", Name: "www"}}, Field: "spec.zoneRef"}, "spec.zoneRef", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, inXR := loc.Field(tc.r)
			if diff := cmp.Diff(tc.want, got); diff != "" || inXR != tc.inXR {
				t.Errorf("%s\nField(...): -want, +got:\n%s\ninXR = %v, want %v", tc.reason, diff, inXR, tc.inXR)
			}
		})
	}
}

func TestFromXRShape(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   string
		want   []string
	}{
		"DuplicateName": {"entries of one list have unique names", `{"keys":[{"name":"a"},{"name":"a"}]}`,
			[]string{`spec.keys[1].name: duplicate name "a": spec.keys[0] has it too`}},
		"UnknownEntryField": {"an entry is only {name, spec}", `{"keys":[{"name":"a","algorithm":"x"}]}`,
			[]string{`spec.keys[0].algorithm: unknown field "algorithm": a list entry has only name and spec`}},
		"NotAList":    {"lists are lists", `{"zones":{"name":"a"}}`, []string{`spec.zones: must be a list of {name, spec}`}},
		"MissingName": {"entries are named", `{"views":[{"spec":{}}]}`, []string{`spec.views[0].name: name is required`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var spec map[string]any
			if err := json.Unmarshal([]byte(tc.spec), &spec); err != nil {
				t.Fatal(err)
			}
			xr := map[string]any{"apiVersion": xfn.APIVersion, "kind": xfn.Kind, "metadata": map[string]any{"name": "auth", "namespace": "dns"}, "spec": spec}
			_, loc, rs := xfn.FromXR(xr)
			var got []string
			for _, r := range rs {
				got = append(got, loc.Message(r))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nFromXR(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
