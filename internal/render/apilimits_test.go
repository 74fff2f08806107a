package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestAPIServerLimits: a cluster whose config ConfigMap would pass the API
// server's limits (1 MiB of data) is refused on the BindCluster with the
// numbers, and nothing is rendered; under the limits it renders (at about
// 2,300 zones the render once produced objects the API server refused: then
// an annotation held every zone's serial, now each zone's file does).
func TestAPIServerLimits(t *testing.T) {
	for name, tc := range map[string]struct {
		reason string
		zones  int
		want   []string // fragments of the errors, in order
	}{
		"1000-zones": {"well under both limits", 1000, nil},
		"3000-zones": {"named.conf for 3,000 zones passes 1 MiB; no annotation holds the zones' state", 3000, []string{
			`cannot render ConfigMap "dns-config": its data is`,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("apiVersion: bind.unkin.net/v1alpha1\nkind: BindCluster\nmetadata: {name: dns, namespace: dns}\nspec: {replicas: 2}\n")
			for i := range tc.zones {
				fmt.Fprintf(&b, "---\napiVersion: bind.unkin.net/v1alpha1\nkind: BindZone\nmetadata: {name: z%d, namespace: dns}\nspec: {clusterRef: dns, zoneName: zone-number-%d.example.com, nameservers: [ns1.example.net.]}\n", i, i)
			}
			items, err := testutil.DecodeItems("in.yaml", []byte(b.String()))
			if err != nil {
				t.Fatal(err)
			}
			objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
			var got []string
			for _, r := range rs {
				if r.Severity != diag.Error {
					continue
				}
				if r.Source.Ref.Kind != "BindCluster" || r.Source.Ref.Name != "dns" {
					t.Errorf("%s: error not on the BindCluster: %s", tc.reason, r)
				}
				for _, w := range tc.want {
					if strings.Contains(r.Message, w) {
						got = append(got, w)
					}
				}
				if !strings.Contains(r.Message, fmt.Sprintf("serves %d zones; split them over more BindClusters", tc.zones)) {
					t.Errorf("%s: the message does not say how many zones and what to do: %s", tc.reason, r.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: errors (-want +got):\n%s\nall results: %v", tc.reason, diff, rs)
			}
			if (len(tc.want) > 0) != (objs == nil) {
				t.Errorf("%s: %d objects rendered with %d errors", tc.reason, len(objs), len(got))
			}
		})
	}
}
