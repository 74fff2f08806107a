package krm

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// TestRenderedItemMatchesMarshal: renderedItem writes every rendered object
// (a generated package with views, DNSSEC keys, every record type) to the
// bytes sigs.k8s.io/yaml.Marshal writes for the object's map, and
// renderedID, which orders the output before anything is encoded, is the
// encoded object's id.
func TestRenderedItemMatchesMarshal(t *testing.T) {
	items, err := decodeItems(mustCut(t, gen.Generate(gen.Options{Zones: 9, Records: 900, Seed: 3, Views: 2}).ResourceList()))
	if err != nil {
		t.Fatal(err)
	}
	var in pipeline.Input
	var rs diag.Results
	for _, it := range items {
		classify(&in, &rs, &it.hdr, func() ([]byte, error) { return it.json, nil })
	}
	objs, prs := pipeline.Run(in, render.Options{Rand: &testutil.DetRand{}})
	rs = append(rs, prs...)
	if rs.HasErrors() || len(objs) == 0 {
		t.Fatalf("render failed: %v", rs)
	}
	for _, o := range objs {
		got, err := renderedItem(o)
		if err != nil {
			t.Fatal(err)
		}
		m, err := renderedMap(o) // a fresh map: renderedItem changed its own
		if err != nil {
			t.Fatal(err)
		}
		want, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got.doc)); diff != "" {
			t.Errorf("%s: renderedItem differs from yaml.Marshal (-want +got):\n%s", o.Path, diff)
		}
		// The writer sorts by renderedID before encoding: it must be the
		// id of the encoded object.
		id, err := renderedID(o)
		if err != nil {
			t.Fatal(err)
		}
		if id != got.id {
			t.Errorf("%s: renderedID %q, the encoded object's id %q", o.Path, id, got.id)
		}
	}
}

func mustCut(t *testing.T, in []byte) [][]byte {
	t.Helper()
	rl, ok := cutResourceList(in)
	if !ok {
		t.Fatal("cannot cut the generated ResourceList")
	}
	return rl.items
}

// TestReadHeader: readHeader reads what json.Unmarshal reads from the JSON
// sigs.k8s.io/yaml writes, and refuses what it refuses.
func TestReadHeader(t *testing.T) {
	cases := map[string]struct {
		reason string
		doc    string
	}{
		"Input":     {reason: "an input with labels and annotations", doc: "apiVersion: bind.unkin.net/v1alpha1\nkind: BindZone\nmetadata:\n  name: z\n  namespace: dns\n  labels: {a: b}\n  annotations: {c: d}\nspec:\n  zoneName: example.com\n"},
		"DataFirst": {reason: "a ConfigMap: data sorts before kind", doc: "kind: ConfigMap\napiVersion: v1\ndata:\n  a: '1'\nmetadata:\n  name: c\n"},
		"NoMeta":    {reason: "no metadata at all", doc: "apiVersion: v1\nkind: List\nitems: []\n"},
		"BadKind":   {reason: "a kind that is not a string", doc: "apiVersion: v1\nkind: [a]\nmetadata: {name: x}\n"},
		"BadLabel":  {reason: "a label value that is not a string", doc: "apiVersion: v1\nkind: A\nmetadata:\n  labels: {a: [1]}\n"},
	}
	for name, tc := range cases {
		js, err := yaml.YAMLToJSON([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		var want, got header
		werr := json.Unmarshal(js, &want)
		gerr := readHeader(js, &got)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: %s: error %v, json.Unmarshal's %v", name, tc.reason, gerr, werr)
		}
		if werr == nil {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: %s: header (-json.Unmarshal +readHeader):\n%s", name, tc.reason, diff)
			}
		}
	}
}
