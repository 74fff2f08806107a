package corpus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// Commit is the pinned commit of ISC's bind9 repository the corpus is
// copied from (copy.sh).
const Commit = "bf74540dfe23bcb77afa62f65d1a290535435747"

var zoneDir = filepath.Join("testdata", "isc", Commit, "checkzone")

// zoneOrigins are the origins bin/tests/system/checkzone/tests.sh loads
// the files with; every other file is loaded as "example".
var zoneOrigins = map[string]string{
	"good-dns-sd-reverse.db": "0.0.0.0.in-addr.arpa", "bad-dns-sd-reverse.db": "0.0.0.0.in-addr.arpa",
	"bad-svcb-servername.db": "0.0.0.0.in-addr.arpa",
	"good-rpz-prefix.db":     "db", "bad-rpz-prefix.db": "db", "bad-tkey.db": "db", "bad-unspec.db": "db",
	"bad1.db": "db", "bad2.db": "db", "bad3.db": "db", "bad4.db": "db",
	"bad-svcb.db": "db", "bad-svcb-mandatory.db": "db",
	"bad-svcb-alpn1.db": "db", "bad-svcb-alpn2.db": "db", "bad-svcb-alpn3.db": "db",
	"bad-svcb-alpn4.db": "db", "bad-svcb-alpn5.db": "db", "bad-svcb-alpn6.db": "db",
	"test1.db": "test", "test2.db": "test", "crashzone.db": "dyn.example.net",
	"ns-address-below-dname.db": "example.com", "delegating-ns-address-below-dname.db": "example.com",
	"zone1.db": "zone1.com",
}

func originOf(file string) string {
	if o, ok := zoneOrigins[file]; ok {
		return o
	}
	return "example"
}

// zoneDiff is a known difference between BIND's verdict on a corpus file
// and fn-validate's on its package, on the versions listed.
type zoneDiff struct {
	versions []string // "9.18", "9.20"
	reason   string
}

// bindLoads reports whether named (of version v) loads file as primary zone
// origin with its default checks: named-checkconf -z on a one-zone
// configuration whose directory is dir ($INCLUDE names are relative to it).
func bindLoads(t *testing.T, v version, dir, origin, file string) (string, bool) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "named.conf")
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("options { directory %q; };\nzone %q { type primary; file %q; };\n", abs, origin, file)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return run(t, v.cmd(t, "named-checkconf", "-z", conf))
}

// fnVerdict runs the pipeline fn-validate runs; it returns the rendered
// objects when there is no error.
func fnVerdict(t *testing.T, z *Zone) ([]render.Object, diag.Results) {
	t.Helper()
	items, err := z.Items()
	if err != nil {
		t.Fatal(err)
	}
	return pipelineRun(items)
}

// pipelineRun is fn-validate's path on items.
func pipelineRun(items []model.Item) ([]render.Object, diag.Results) {
	return pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
}

// soaTimerRefusal are the fields of the SOA timers bind-fn refuses on
// purpose where BIND loads them (0, or an expire within refresh + retry).
var soaTimerRefusal = map[string]bool{"spec.soa.refresh": true, "spec.soa.retry": true, "spec.soa.expire": true}

func onlySOATimers(rs diag.Results) bool {
	for _, r := range rs {
		if r.Severity == diag.Error && !soaTimerRefusal[r.Field] {
			return false
		}
	}
	return true
}

func errorsOf(rs diag.Results) string {
	var b strings.Builder
	for _, r := range rs {
		if r.Severity == diag.Error {
			fmt.Fprintf(&b, "  %s %s: %s\n", r.Source.Ref, r.Field, r.Message)
		}
	}
	return b.String()
}

// convert converts a corpus zone file: as written, or (for directives the
// API cannot hold) from BIND 9.18's dump of it.
func convert(t *testing.T, v918 version, file string) (*Zone, error) {
	data, err := os.ReadFile(filepath.Join(zoneDir, "zones", file))
	if err != nil {
		t.Fatal(err)
	}
	origin := originOf(file)
	z, err := ConvertZone(origin, string(data))
	if !errors.Is(err, ErrInexpressible) {
		return z, err
	}
	c := v918.cmd(t, "named-checkzone", "-D", "-o", "-", origin, filepath.Join("zones", file))
	c.Dir = zoneDir
	dump, ok := stdout(t, c)
	if !ok {
		return nil, err
	}
	return ConvertDump(origin, dump)
}

// renderedZone is the zone file of the package's one zone, with the parts
// of a zone the render split across ConfigMaps inlined where its
// `$INCLUDE <mount path>` lines name them (as the pod's mounts would serve
// them), so that it loads on its own.
func renderedZone(t *testing.T, objs []render.Object, origin string) string {
	t.Helper()
	name := model.ZoneFileName("db", "", dns.CanonicalName(dns.Fqdn(origin)))
	data := map[string]string{}
	for _, c := range testutil.Clusters(t, objs) {
		for _, cm := range c.ConfigMaps {
			for k, v := range cm.Data {
				data[k] = v
			}
		}
	}
	text, ok := data[name]
	if !ok {
		t.Fatalf("the render has no zone file %s", name)
	}
	if !strings.Contains(text, "$INCLUDE ") {
		return text
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		path, ok := strings.CutPrefix(l, "$INCLUDE ")
		if !ok {
			b.WriteString(l)
			continue
		}
		part, found := data[filepath.Base(strings.TrimSpace(path))]
		if !found {
			t.Fatalf("the render's zone file %s includes %s, which no ConfigMap holds", name, strings.TrimSpace(path))
		}
		b.WriteString(part)
		if !strings.HasSuffix(part, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// dumpRecords is BIND's canonical dump of a zone, one record a line, the
// SOA and the apex NS TTL and case aside (the package generates the SOA
// from spec.soa, and the apex NS takes the zone's default TTL; its targets,
// spec.nameservers, are rendered as canonical names, in lower case).
func dumpRecords(dump, origin string) []string {
	apex := dns.CanonicalName(dns.Fqdn(origin))
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || strings.HasPrefix(l, ";") || f[3] == "SOA" {
			continue
		}
		f[0] = dns.CanonicalName(f[0])
		if f[3] == "NS" && f[0] == apex {
			f[1] = "-"
			f[4] = dns.CanonicalName(f[4])
		}
		out = append(out, strings.Join(f, " "))
	}
	sort.Strings(out)
	return out
}

// TestZoneCorpus: for every zone file of BIND's checkzone system test,
// fn-validate's verdict on the converted package equals BIND's verdict on
// the file, on 9.18 and on 9.20, or the difference is in docs/validation.md's table (knownDiffs).
// When both accept, the rendered zone loads and BIND reads the same records
// from the file and from it (the converter's self-check), on each release.
func TestZoneCorpus(t *testing.T) {
	vs := versions(t)
	files, err := filepath.Glob(filepath.Join(zoneDir, "zones", "*.db"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus zone files under %s: %v", zoneDir, err)
	}
	counts := map[string]map[string]int{}
	seen := map[string]bool{}
	for _, path := range files {
		file := filepath.Base(path)
		seen[file] = true
		t.Run(file, func(t *testing.T) {
			origin := originOf(file)
			z, cerr := convert(t, vs[0], file)
			var objs []render.Object
			var rs diag.Results
			fnOK, timers := false, false
			if cerr == nil {
				objs, rs = fnVerdict(t, z)
				fnOK = !rs.HasErrors()
				if !fnOK && onlySOATimers(rs) {
					// A deliberate refusal (docs/validation.md): the
					// records are still held to BIND's verdict.
					timers = true
					objs, rs = fnVerdict(t, z.WithDefaultTimers())
					fnOK = !rs.HasErrors()
				}
			}
			known, listed := knownDiffs(t, "zone")[file]
			for _, v := range vs {
				out, bindOK := bindLoads(t, v, zoneDir, origin, filepath.Join("zones", file))
				isListed := listed && contains(known.versions, v.name)
				c := counts[v.name]
				if c == nil {
					c = map[string]int{}
					counts[v.name] = c
				}
				switch {
				case bindOK == fnOK && isListed:
					t.Errorf("%s: listed as a known difference (%s), but BIND and fn-validate agree (loads: %v): remove it from docs/validation.md's table of deliberate differences", v.name, known.reason, bindOK)
				case bindOK == fnOK:
					c["agree"]++
					if cerr != nil {
						c["agree, the converter cannot read it either"]++
					}
					if z != nil && z.FromDump {
						c["agree, converted from BIND's dump"]++
					}
					if timers {
						c["agree, SOA timers refused on purpose"]++
					}
				case isListed:
					c["listed"]++
				case bindOK && cerr != nil:
					t.Errorf("%s: BIND loads it, but the converter cannot: %v\nBIND: %s", v.name, cerr, out)
				case bindOK:
					t.Errorf("%s: BIND loads it, fn-validate refuses the package:\n%sBIND: %s", v.name, errorsOf(rs), out)
				default:
					t.Errorf("%s: BIND refuses it, fn-validate accepts the package\nBIND: %s", v.name, out)
				}
				if !fnOK {
					continue
				}
				// The render must load wherever fn-validate accepts.
				dir := t.TempDir()
				text := renderedZone(t, objs, origin)
				if err := os.WriteFile(filepath.Join(dir, "zone.db"), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				if out, ok := bindLoads(t, v, dir, origin, "zone.db"); !ok {
					t.Errorf("%s: fn-validate accepts the package, but BIND refuses its rendered zone:\n%s\n%s", v.name, out, text)
				}
				if !bindOK {
					continue
				}
				// Self-check: the same records from the file and from the render.
				c1 := v.cmd(t, "named-checkzone", "-D", "-o", "-", origin, filepath.Join("zones", file))
				c1.Dir = zoneDir
				want, ok1 := stdout(t, c1)
				got, ok2 := stdout(t, v.cmd(t, "named-checkzone", "-D", "-o", "-", origin, filepath.Join(dir, "zone.db")))
				if !ok1 || !ok2 {
					t.Errorf("named-checkzone -D: %v %v\n%s\n%s", ok1, ok2, want, got)
					continue
				}
				d := cmp.Diff(dumpRecords(want, origin), dumpRecords(got, origin))
				switch why, listed := knownWhy(t, "selfcheck", file); {
				case d == "" && listed:
					t.Errorf("listed in knownSelfCheck (%s), but BIND reads the same records: remove it", why)
				case listed:
					c["self-check differs, listed"]++
				case d != "":
					t.Errorf("BIND reads other records from the rendered zone than from the file (-file +render):\n%s", d)
				default:
					c["self-check same records"]++
				}
			}
		})
	}
	for f := range knownDiffs(t, "zone") {
		if !seen[f] {
			t.Errorf("knownZoneDiffs lists %s, which is not in the corpus", f)
		}
	}
	t.Logf("%d files; per version: %v", len(files), counts)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
