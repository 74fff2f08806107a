package validate_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestRecursionBIND runs real named on the rendered primary config of an
// authoritative cluster whose office view recurses, in a private network
// namespace (loopback only, the client addresses on lo), and asks which
// clients it offers recursion to (the RA flag on an answer from the
// view's own zone, so nothing leaves the namespace). A client the view
// matches but spec.allowRecursion does not must get no recursion (an open
// resolver: the view once rendered allow-recursion { any; }).
func TestRecursionBIND(t *testing.T) {
	bindtools.RequireBIND(t)
	bindtools.RequireRoot(t)
	pkg := testutil.Lines(
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindCluster", "metadata: {name: auth, namespace: dns}",
		"spec: {replicas: 1, allowRecursion: [192.0.2.0/25]}", "---",
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindView", "metadata: {name: office, namespace: dns}",
		"spec: {clusterRef: auth, order: 1, recursion: true, matchClients: [192.0.2.0/24]}", "---",
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindView", "metadata: {name: world, namespace: dns}", "spec: {clusterRef: auth, order: 2}", "---",
		"apiVersion: bind.unkin.net/v1alpha1", "kind: BindZone", "metadata: {name: a, namespace: dns}",
		"spec: {clusterRef: auth, viewRef: office, zoneName: a.example, nameservers: [ns1.example.net.], records: [{name: www, type: A, values: [198.51.100.1]}]}",
	)
	items, err := testutil.DecodeItems("in.yaml", []byte(pkg))
	if err != nil {
		t.Fatal(err)
	}
	objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		t.Fatalf("does not render:\n%s", join(rs))
	}
	c := testutil.Clusters(t, objs)["auth"]
	root := t.TempDir()
	testutil.LayPod(t, root, c)
	for _, d := range testutil.AgentConfig(t, c).DataDirs {
		if err := os.MkdirAll(filepath.Join(root, layout.DataPath(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	clients := []string{"192.0.2.7", "192.0.2.200"}
	// One shell in a fresh network namespace: lo up with the server's and
	// the clients' addresses, named in the background, then one dig per
	// client (each retried until named has loaded the zone: a bound, not a
	// measurement).
	var script strings.Builder
	fmt.Fprintf(&script, "ip link set lo up && ip addr add 192.0.2.53/32 dev lo")
	for _, a := range clients {
		fmt.Fprintf(&script, " && ip addr add %s/32 dev lo", a)
	}
	fmt.Fprintf(&script, " || exit 1\n%q -g -u root -t %q -c %q >%q 2>&1 &\nnamed=$!\n", bindtools.BINDPath(t, "named"), root, layout.ConfigFile(layout.NamedConfPrimary), filepath.Join(t.TempDir(), "named.log"))
	for _, a := range clients {
		// named answers SERVFAIL until the zone is loaded: wait for aa.
		fmt.Fprintf(&script, "for i in $(seq 1 120); do out=$(%q +tries=1 +time=1 -b %s @192.0.2.53 www.a.example A) && echo \"$out\" | grep -q 'flags:[^;]* aa' && break; sleep 0.5; done\necho \"%s $(echo \"$out\" | grep -o 'flags:[^;]*' | head -1)\"\n", bindtools.BINDPath(t, "dig"), a, a)
	}
	script.WriteString("kill $named; wait $named 2>/dev/null\n")
	out, err := exec.Command("unshare", "-n", "sh", "-c", script.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		addr, flags, _ := strings.Cut(line, " ")
		if !strings.Contains(flags, "aa") {
			t.Fatalf("client %s: no authoritative answer from the office view: %q\n%s", addr, flags, out)
		}
		got[addr] = strings.Contains(" "+strings.TrimPrefix(flags, "flags:")+" ", " ra ")
	}
	want := map[string]bool{"192.0.2.7": true, "192.0.2.200": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recursion available (RA) by client, spec.allowRecursion [192.0.2.0/25] (-want +got):\n%s\n%s", diff, out)
	}
}
