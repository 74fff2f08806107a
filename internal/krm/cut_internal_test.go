package krm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/gen"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestRenderedItemMatchesMarshal: renderedItem writes every rendered object
// (a generated package with views, DNSSEC keys, every record type) to the
// bytes sigs.k8s.io/yaml.Marshal writes for the object's map.
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
		m, err := objects.ToMap(o.Obj)
		if err != nil {
			t.Fatal(err)
		}
		if o.Path != "" {
			meta := m["metadata"].(map[string]any)
			ann, _ := meta["annotations"].(map[string]any)
			if ann == nil {
				ann = map[string]any{}
				meta["annotations"] = ann
			}
			ann[fn.PathAnnotation] = o.Path
			ann[legacyPathAnnotation] = o.Path
		}
		want, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got.doc)); diff != "" {
			t.Errorf("%s: renderedItem differs from yaml.Marshal (-want +got):\n%s", o.Path, diff)
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
