package importer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestRoundTrip: import(render(x)) is equivalent to x for the examples.
// The example is rendered and its primary pod laid out (the files where
// the pod mounts them); the primary's named.conf is imported as any
// server's would be; the import is rendered again, and the plan between
// the two renders has no zone change: every zone holds the same RRsets.
func TestRoundTrip(t *testing.T) {
	for _, ex := range []string{"authoritative", "resolver"} {
		t.Run(ex, func(t *testing.T) {
			items := testutil.ReadItems(t, filepath.Join(bindtools.RepoRoot(t), "examples", ex))
			objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
			if rs.HasErrors() {
				t.Fatal(rs)
			}
			for name, c := range testutil.Clusters(t, objs) {
				root := t.TempDir()
				testutil.LayPod(t, root, c)
				read := func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(root, p)) }
				conf, err := namedconf.ReadConf(layout.ConfigFile(layout.NamedConfPrimary), "/", read)
				if err != nil {
					t.Fatal(err)
				}
				res, err := importer.Import(conf, importer.Options{Cluster: name, Namespace: "dns", Replicas: 3, ZoneDir: layout.DataDir, Read: read})
				if err != nil {
					t.Fatal(err)
				}
				rs, err := res.Check(&testutil.DetRand{})
				if err != nil {
					t.Fatal(err)
				}
				if rs.HasErrors() {
					for _, r := range rs {
						t.Log(r)
					}
					t.Fatal("the import of a rendered config does not render")
				}
				for _, l := range res.Losses {
					t.Errorf("not carried: %s", l)
				}
				items2, err := res.Items()
				if err != nil {
					t.Fatal(err)
				}
				objs2, rs := pipeline.Run(pipeline.Input{Items: items2}, render.Options{Rand: &testutil.DetRand{}})
				if rs.HasErrors() {
					t.Fatal(rs)
				}
				a, err := plan.FromRender(objs)
				if err != nil {
					t.Fatal(err)
				}
				b, err := plan.FromRender(objs2)
				if err != nil {
					t.Fatal(err)
				}
				p, err := plan.Compare(a, b)
				if err != nil {
					t.Fatal(err)
				}
				for _, cp := range p.Clusters {
					for _, z := range cp.Zones {
						if len(z.RRsets) > 0 || z.Change != plan.Changed {
							t.Errorf("%s: zone %s/%s %s with %d RRset changes", cp.Name, z.View, z.Zone, z.Change, len(z.RRsets))
						}
					}
					// Keys come back as importExisting (their material in
					// Secrets kept apart): only their includes move.
					for _, l := range cp.Config {
						if !strings.HasPrefix(l.Line, "include ") || !strings.Contains(l.Line, "-tsig.conf") {
							t.Errorf("named.conf differs: %s %s (%s)", l.Op, l.Line, l.Role)
						}
					}
				}
			}
		})
	}
}
