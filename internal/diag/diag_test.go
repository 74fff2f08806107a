package diag

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRefOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		obj    map[string]any
		want   ObjectRef
	}{
		"whole": {reason: "apiVersion, kind and metadata's namespace and name",
			obj:  map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "dns", "labels": map[string]any{}}},
			want: ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "dns", Name: "c"}},
		"no metadata": {reason: "an object without metadata has no name, and no panic",
			obj: map[string]any{"kind": "BindZone"}, want: ObjectRef{Kind: "BindZone"}},
		"not strings": {reason: "a field of another type reads as empty",
			obj:  map[string]any{"apiVersion": 1, "kind": "BindZone", "metadata": map[string]any{"name": []any{"x"}}},
			want: ObjectRef{Kind: "BindZone"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RefOf(tc.obj)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
