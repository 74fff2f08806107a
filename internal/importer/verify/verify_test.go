package verify_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/agent"
	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/importer/verify"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// envAgent makes the test binary the pod's agent (the verify's pod runs
// it in place of bind-fn-agent).
const envAgent = "BINDFN_VERIFY_TEST_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(envAgent) == "1" {
		os.Exit(agent.Main(context.Background(), os.Args[1:], os.Getenv, os.Stderr))
	}
	os.Exit(m.Run())
}

// corpus are the configurations verified by real named: the importer's
// test cases and the import corpus (testdata/corpus), and the Debian
// default of this host (/etc/bind, BIND's package).
func corpus(t *testing.T) map[string]string {
	root := bindtools.RepoRoot(t)
	out := map[string]string{}
	for _, glob := range []string{"internal/importer/testdata/*/named.conf", "internal/importer/testdata/corpus/*/named.conf"} {
		confs, _ := filepath.Glob(filepath.Join(root, glob))
		for _, c := range confs {
			name := filepath.Base(filepath.Dir(c))
			if name == "lossy" || name == "debian" {
				continue // lossy: refused by named on purpose; debian: the host's own, below
			}
			out[name] = c
		}
	}
	out["debian-host"] = "/etc/bind/named.conf"
	return out
}

// TestVerifyCorpus imports every corpus configuration as `bind-fn import`
// does and verifies it with real named (original and rendered side by
// side): every difference BIND shows must be one the import reported, in
// the same zone file or at a statement the import listed.
func TestVerifyCorpus(t *testing.T) {
	bindtools.RequireRoot(t)
	bindtools.RequireBIND(t)
	if !inOwnNamespaces(t) {
		return
	}
	rel := bindtools.Current(t)
	named, usr := rel.Prog(t, "named"), rel.Usr(t)
	self, _ := os.Executable()
	for name, conf := range corpus(t) {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(conf); err != nil {
				t.Fatalf("%s: %v (Debian's bind9 package installs /etc/bind)", conf, err)
			}
			if only, why := writtenFor(conf); only != "" && !slices.Contains(strings.Fields(only), rel.Name) {
				// Written for other releases: this one must refuse it (so
				// the marker cannot hide a configuration it serves).
				out, err := rel.Offline(t, "named-checkconf", conf).CombinedOutput()
				if err == nil {
					t.Fatalf("%s is marked for BIND %s only (%s), but %s accepts it: remove or correct %s", conf, only, why, rel, markerFile)
				}
				t.Logf("written for BIND %s only (%s); %s refuses it, as the marker says: %s", only, why, rel, strings.TrimSpace(string(out)))
				return
			}
			res, zoneDir, stmts := importConf(t, conf)
			missing := missingPaths()
			losses, sum, err := verify.Run(verify.Options{Conf: conf, ZoneDir: zoneDir, Result: res, Named: named, Usr: usr, ListenOn: verify.ListenOn(stmts),
				Agent: []string{self}, AgentEnv: []string{envAgent + "=1"}, Work: t.TempDir(), Timeout: 2 * time.Minute, Log: testWriter{t}})
			if err != nil {
				t.Fatal(err)
			}
			leftOnHost(t, missing)
			for _, l := range res.Losses {
				t.Logf("import reported: %s", l)
			}
			for _, n := range sum.Notes {
				t.Logf("note: %s", n)
			}
			unexplained := 0
			for _, l := range losses {
				if explained(l, res.Losses) {
					t.Logf("BIND shows (reported by the import): %s", l)
					continue
				}
				unexplained++
				t.Errorf("BIND shows a difference the import did not report: %s", l)
			}
			t.Logf("%s: %d zones compared by AXFR, %d queries, %d NOTIFYs caught; %d differences, %d unexplained; the import reported %d losses", name, sum.Zones, sum.Queries, sum.Notifies, len(losses), unexplained, len(res.Losses))
		})
	}
}

// envTest names the test the namespaces were entered for.
const envTest = "BINDFN_VERIFY_TEST"

// inOwnNamespaces runs the calling test in namespaces of its own (the
// verify's): outside them it re-executes the test binary there and
// returns false; inside it returns true for the test they were made for
// (the others skip there: each runs, and is reported, in its own).
func inOwnNamespaces(t *testing.T) bool {
	t.Helper()
	if verify.Inside() {
		if os.Getenv(envTest) != t.Name() {
			t.Skipf("%s runs in namespaces of its own", t.Name())
		}
		return true
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envTest, t.Name())
	code, err := verify.Enter(append([]string{self}, os.Args[1:]...), os.Stdout, os.Stderr)
	if err != nil || code != 0 {
		t.Fatalf("the verify namespaces: exit %d, %v (the output is above)", code, err)
	}
	return false
}

// importConf imports conf as `bind-fn import` does (zone files read by
// BIND).
func importConf(t *testing.T, conf string) (*importer.Result, string, []namedconf.Located) {
	t.Helper()
	dir := filepath.Dir(conf)
	stmts, err := namedconf.ReadConf(conf, dir, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	zoneDir := importer.ZoneDir(stmts, dir)
	checkzone := bindtools.BINDPath(t, "named-checkzone")
	res, err := importer.Import(stmts, importer.Options{Cluster: "imp", ZoneDir: zoneDir, Read: os.ReadFile,
		Exists: func(p string) bool { _, err := os.Stat(p); return err == nil }, Glob: filepath.Glob,
		ReadZone: importer.NamedZoneReader(checkzone), SignedSerial: importer.NamedSignedSerial(checkzone)})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := res.Check(&testutil.DetRand{})
	if err != nil || rs.HasErrors() {
		t.Fatalf("the import does not render: %v %v", err, rs)
	}
	return res, zoneDir, stmts
}

// TestVerifyFindsDifferences: the verify can fail. The classes import,
// spoiled the ways real imports were once spoiled (docs/import.md), must show each
// difference under real BIND.
func TestVerifyFindsDifferences(t *testing.T) {
	bindtools.RequireRoot(t)
	bindtools.RequireBIND(t)
	if !inOwnNamespaces(t) {
		return
	}
	conf := filepath.Join(bindtools.RepoRoot(t), "internal", "importer", "testdata", "classes", "named.conf")
	zone := func(res *importer.Result, name string) *v1alpha1.BindZone {
		for _, o := range res.Objects["zones.yaml"] {
			if z := o.(*v1alpha1.BindZone); z.Name == name {
				return z
			}
		}
		t.Fatalf("no zone %s", name)
		return nil
	}
	cases := map[string]struct {
		reason string
		spoil  func(res *importer.Result)
		want   string
	}{
		"RecursionWidened": {
			reason: "The world view recursing for anyone (the render's old allow-recursion { any; } for a recursive view).",
			spoil: func(res *importer.Result) {
				for _, o := range res.Objects["views.yaml"] {
					if v := o.(*v1alpha1.BindView); v.Name == "world" {
						yes := true
						v.Spec.Recursion = &yes
					}
				}
				res.Objects["cluster.yaml"][0].(*v1alpha1.BindCluster).Spec.AllowRecursion = []string{"any"}
			},
			want: `recursion from`,
		},
		"SerialRestarted": {
			reason: "The serial not carried (the package without the import's state): the render restarts it.",
			spoil:  func(res *importer.Result) { res.State = nil },
			want:   "lan/example.net serial",
		},
		"NotifyToTheNSSetLost": {
			reason: "notify yes carried as explicit: the NS set's secondary hears nothing.",
			spoil:  func(res *importer.Result) { zone(res, "lan-example.net").Spec.AlsoNotify = nil },
			want:   "NOTIFY targets of zone example.net",
		},
		"GenerateTTL": {
			reason: "$GENERATE lines given 3600 (miekg/dns) where BIND gives $TTL.",
			spoil: func(res *importer.Result) {
				z := zone(res, "lan-gen.example")
				for i := range z.Spec.Records {
					if strings.HasPrefix(z.Spec.Records[i].Name, "host") {
						ttl := int32(3600)
						z.Spec.Records[i].TTL = &ttl
					}
				}
			},
			want: "lan/gen.example host1.gen.example. A",
		},
	}
	rel := bindtools.Current(t)
	named, usr := rel.Prog(t, "named"), rel.Usr(t)
	self, _ := os.Executable()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, zoneDir, _ := importConf(t, conf)
			tc.spoil(res)
			losses, _, err := verify.Run(verify.Options{Conf: conf, ZoneDir: zoneDir, Result: res, Named: named, Usr: usr,
				Agent: []string{self}, AgentEnv: []string{envAgent + "=1"}, Work: t.TempDir(), Timeout: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, l := range losses {
				all = append(all, l.String())
			}
			if !strings.Contains(strings.Join(all, "\n"), tc.want) {
				t.Errorf("%s\nthe verify shows no %q; it shows:\n%s", tc.reason, tc.want, strings.Join(all, "\n"))
			}
		})
	}
}

// explained says whether the import reported a loss in the zone file a
// verify difference is in, or one that names its zone (quoted, or as
// "zone <name> ").
func explained(l importer.Loss, reported []importer.Loss) bool {
	file := strings.TrimSuffix(l.Where, ":1")
	var zones []string
	words := strings.Fields(l.What)
	for i, w := range words {
		if _, z, ok := strings.Cut(w, "/"); ok && !strings.Contains(z, "/") {
			w = z
		}
		// A dotted name, or any name after "zone" (single-label zones).
		if w = strings.Trim(w, ".:"); strings.Contains(w, ".") || i > 0 && words[i-1] == "zone" {
			zones = append(zones, w)
		}
	}
	for _, r := range reported {
		if strings.HasPrefix(r.Where, file+":") {
			return true
		}
		for _, z := range zones {
			if what := r.What + " "; strings.Contains(what, "zone "+z+" ") || strings.Contains(what, "zone "+z+":") ||
				strings.Contains(r.What, `"`+z+`"`) || strings.Contains(r.Why, "zone "+z+" ") || strings.Contains(r.Why, "zone "+z+"'") {
				return true
			}
		}
	}
	return false
}

// markerFile, beside a corpus named.conf, says which BIND releases the
// configuration is written for: its first line the releases (as
// bindtools names them: 9.18, 9.20), the rest why.
const markerFile = "bind-releases"

func writtenFor(conf string) (only, why string) {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(conf), markerFile))
	if err != nil {
		return "", ""
	}
	only, why, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(only), strings.TrimSpace(why)
}

// hostPaths are the fixed paths a verify needs (the pod's, ip netns's):
// it makes them in its own mount namespace only.
var hostPaths = []string{"/etc/bind-fn", "/run/bind-fn", "/var/lib/bind", "/run/netns"}

// labCreated lists the paths a multi-pod lab made on the host (they may
// appear while a verify runs; they are the lab's).
const labCreated = "/run/bind-fn-lab.created"

func missingPaths() []string {
	var out []string
	for _, p := range hostPaths {
		if _, err := os.Stat(p); err != nil {
			out = append(out, p)
		}
	}
	return out
}

// leftOnHost fails when a path missing before the verify exists after it
// (the verify's mounts are gone by then: what is left is the host's),
// unless a multi-pod lab made it meanwhile.
func leftOnHost(t *testing.T, missing []string) {
	t.Helper()
	lab, _ := os.ReadFile(labCreated)
	for _, p := range missing {
		if _, err := os.Stat(p); err == nil && !slices.Contains(strings.Fields(string(lab)), p) {
			t.Errorf("the verify left %s on the host (it must make it in its own mount namespace only)", p)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
