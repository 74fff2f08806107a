package pipeline

import (
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestEachResultOnce: every problem is reported once, also for objects
// shared by the namespace's clusters (no clusterRef), without the pipeline
// deduplicating anything (docs/design.md#checks: one home for every check).
func TestEachResultOnce(t *testing.T) {
	items, err := testutil.DecodeItems("shared.yaml", []byte(testutil.Lines(
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindCluster", "metadata: {name: a, namespace: dns}", "spec: {}", "---",
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindCluster", "metadata: {name: b, namespace: dns}", "spec: {}", "---",
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindACL", "metadata: {name: loop, namespace: dns}", "spec: {addresses: [loop, 10.1.2.3/8]}", "---",
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindDNSSECPolicy", "metadata: {name: p, namespace: dns}",
		"spec: {dnskeyTTL: P1H, keys: [{role: ksk, algorithm: ed25519}, {role: zsk}]}", "---",
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindTSIGKey", "metadata: {name: k, namespace: dns}", "spec: {secretName: a-keys}",
	)))
	if err != nil {
		t.Fatal(err)
	}
	_, rs := Run(Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	seen := map[string]int{}
	for _, r := range rs {
		seen[r.String()]++
	}
	for r, n := range seen {
		if n > 1 {
			t.Errorf("reported %d times: %s", n, r)
		}
	}
	if len(rs) < 4 {
		t.Errorf("want the ACL element, the loop, the duration, the algorithms and the Secret name reported, got %v", rs)
	}
}
