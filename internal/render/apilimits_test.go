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

// TestAPIServerLimits: a cluster of 3,000 zones renders (it once passed 1
// MiB in <cluster>-config, whose named.conf held every zone statement; now
// each zone's statement is in its shard, docs/state.md#shards), and nothing
// it renders is over the API server's limits (SelfCheck would refuse it on
// the BindCluster). TestScaleObjects takes it to 20,000 zones.
func TestAPIServerLimits(t *testing.T) {
	for name, tc := range map[string]struct {
		reason string
		zones  int
		want   []string // fragments of the errors, in order
	}{
		"1000-zones": {"well under both limits", 1000, nil},
		"3000-zones": {"refused before the zone statements were sharded: <cluster>-config held them all", 3000, nil},
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
				if !strings.Contains(r.Message, fmt.Sprintf("serves %d zones", tc.zones)) {
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
