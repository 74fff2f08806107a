package differential

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestHarnessOnExample: examples/authoritative (views, catalog, RPZ, a
// signed and a dynamic zone) loads on every stage, so the harness reports
// no failure where BIND has none; and a broken zone file laid into the same
// pod makes the named stage fail, so it can.
func TestHarnessOnExample(t *testing.T) {
	requirements(t)
	items := testutil.ReadItems(t, filepath.Join(bindtools.RepoRoot(t), "examples", "authoritative"))
	v := Check(t, items, Options{Named: true})
	if !v.Accepted || len(v.BIND) > 0 {
		t.Fatalf("examples/authoritative: accepted=%v, BIND: %s, fn-validate: %v", v.Accepted, failures(v), v.Errors)
	}

	objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		t.Fatal(rs)
	}
	c := testutil.Clusters(t, objs)["auth"]
	root, msg := layPod(t, c)
	defer os.RemoveAll(root)
	if msg != "" {
		t.Fatal(msg)
	}
	zones := zoneFiles(t, root, layout.ConfigFile(layout.NamedConfPrimary))
	if len(zones) < 4 {
		t.Fatalf("named-checkconf -p lists %d primary zones, want the example's 4 or more: %+v", len(zones), zones)
	}
	var broken string
	for _, z := range zones {
		if strings.HasPrefix(z.file, layout.ZonesDir) {
			broken = z.name
			// the file is a kubelet link into ..data: write through it
			if err := os.WriteFile(filepath.Join(root, z.file), []byte("$TTL 60\n@ IN SOA ns1 h 1 2 3 4 5\n@ IN NS ns1\nbad IN A 192.0.2.300\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	fs := runNamed(t, "auth", root, layout.NamedConfPrimary)
	if len(fs) == 0 || !strings.Contains(fs[0].Msg, broken) {
		t.Fatalf("named with a broken zone file for %s: want a failure naming it, got %v", broken, fs)
	}
	t.Logf("named stage caught: %s", fs[0].Msg)
}

// TestPairTransfers: examples/authoritative on a primary and a secondary
// joined by a veth pair: the secondary transfers every zone (both views,
// the catalog and its members, the RPZ, the signed and the dynamic zone).
func TestPairTransfers(t *testing.T) {
	requirements(t)
	items := testutil.ReadItems(t, filepath.Join(bindtools.RepoRoot(t), "examples", "authoritative"))
	v := Check(t, items, Options{Named: true, Transfer: true})
	if !v.Accepted || len(v.BIND) > 0 {
		t.Fatalf("examples/authoritative: accepted=%v, BIND: %s", v.Accepted, failures(v))
	}
}

// TestPairCatchesBadKey: the transfer stage can fail. The secondary's copy
// of the external view's transfer key gets another secret, so TSIG fails
// and the view's zones never arrive.
func TestPairCatchesBadKey(t *testing.T) {
	requirements(t)
	items := testutil.ReadItems(t, filepath.Join(bindtools.RepoRoot(t), "examples", "authoritative"))
	objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		t.Fatal(rs)
	}
	c := testutil.Clusters(t, objs)["auth"]
	var roots []string
	for range 2 {
		root, msg := layPod(t, c)
		defer os.RemoveAll(root)
		if msg != "" {
			t.Fatal(msg)
		}
		roots = append(roots, root)
	}
	keyFile := filepath.Join(roots[1], layout.GeneratedKeyFile("auth", "transfer-key-tsig"))
	if _, err := os.Stat(keyFile); err != nil {
		t.Fatalf("the example's transfer key file moved: %v", err)
	}
	if err := os.WriteFile(keyFile, []byte(`key "transfer-key" { algorithm hmac-sha256; secret "d3JvbmctZGlmZmVyZW50LXNlY3JldA=="; };`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { TransferTimeout = d }(TransferTimeout)
	TransferTimeout = 5 * time.Second
	zones := zoneFiles(t, roots[0], layout.ConfigFile(layout.NamedConfPrimary))
	fs := runPair(t, c, roots[0], roots[1], zones)
	if len(fs) == 0 || fs[len(fs)-1].Stage != StageTransfer || !strings.Contains(fs[len(fs)-1].Msg, "/in/external") || !strings.Contains(fs[len(fs)-1].Msg, "never got every zone: TSIG") {
		t.Fatalf("a secondary with the wrong transfer key: want the external view's zones not transferred, got %v", fs)
	}
	t.Logf("transfer stage caught: %s", strings.SplitN(fs[len(fs)-1].Msg, "\n", 2)[0])
}
