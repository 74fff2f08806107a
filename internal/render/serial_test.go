package render_test

import (
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/output"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// serials reads the zone state a render left in its output, by zone file
// name, through the one reader (internal/output).
func serials(t *testing.T, objs []render.Object) map[string]output.Zone {
	t.Helper()
	var cms []output.ConfigMap
	for _, p := range previous(t, objs) {
		if p.Kind == "ConfigMap" {
			cms = append(cms, output.ConfigMap{Src: p.Src, Data: p.Data})
		}
	}
	all, rs := output.Read(cms)
	if rs.HasErrors() || len(all) != 1 {
		t.Fatalf("zone state of one cluster: %d clusters, %v", len(all), rs)
	}
	for _, zs := range all {
		return zs
	}
	return nil
}

// TestSerialSurvivesRemoval: a zone removed in one render and restored in
// the next continues from its last serial; restarting at 1 would leave the
// secondaries that kept the higher serial on the old data (docs/design.md#state).
func TestSerialSurvivesRemoval(t *testing.T) {
	zone := func(ip string) string {
		return testutil.Lines(
			"apiVersion: bind.unkin.net/v1alpha1", "kind: BindZone",
			"metadata: {name: b, namespace: dns}",
			"spec: {clusterRef: tiny, zoneName: b.example, nameservers: [ns1.example.net.], records: [{name: www, type: A, values: ['"+ip+"']}]}",
		)
	}
	base := testutil.Lines(
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindCluster", "metadata: {name: tiny, namespace: dns}", "spec: {}", "---",
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindZone", "metadata: {name: a, namespace: dns}",
		"spec: {clusterRef: tiny, zoneName: a.example, nameservers: [ns1.example.net.]}",
	)
	items := func(text string) []model.Item {
		its, err := testutil.DecodeItems("in.yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return its
	}
	r1 := run(t, items(base+"\n---\n"+zone("192.0.2.1")), nil)
	r2 := run(t, items(base+"\n---\n"+zone("192.0.2.2")), previous(t, r1))
	if got := serials(t, r2)["db.b.example"].Serial; got != 2 {
		t.Fatalf("changed zone: serial %d, want 2", got)
	}
	r3 := run(t, items(base), previous(t, r2))
	if st, ok := serials(t, r3)["db.b.example"]; !ok || st.Serial != 2 || !st.Removed {
		t.Errorf("removed zone: state %+v (kept %v), want serial 2 kept", st, ok)
	}
	r4 := run(t, items(base+"\n---\n"+zone("192.0.2.3")), previous(t, r3))
	if got := serials(t, r4)["db.b.example"].Serial; got != 3 {
		t.Errorf("restored zone with new data: serial %d, want 3 (never back to 1)", got)
	}
}
