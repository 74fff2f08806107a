package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestMissingInput: which errors are a file of a change that has not
// arrived, and which object brings it.
func TestMissingInput(t *testing.T) {
	a := &Agent{
		opt: Options{ConfigFile: "/cfg/agent.json", ZonesDir: "/zones", KeysDir: "/k/keys",
			Mirrors: []Mirror{{Name: "c-zones-3", Live: "/zones/3", Mount: "/mounted/zones/3"}}},
		cfg: &layout.AgentConfigDoc{Cluster: "c"},
	}
	notExist := func(p string) error { return &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist} }
	cases := map[string]struct {
		reason string
		err    error
		want   string // MissingInput's path and object, "" for none
	}{
		"SeedSource": {reason: "a seeded zone's source in a zones ConfigMap not laid yet",
			err: fmt.Errorf("seedZones[0]: cannot seed /data/x: %w", notExist("/zones/1/x.zone")), want: `/zones/1/x.zone from ConfigMap "c-zones-1"`},
		"FollowedConfigMap": {reason: "a followed ConfigMap is named by its --configmap name",
			err: notExist("/zones/3/y.zone"), want: `/zones/3/y.zone from ConfigMap "c-zones-3"`},
		"ConfigFile": {reason: "a file of the config ConfigMap",
			err: notExist("/cfg/extra.conf"), want: `/cfg/extra.conf from ConfigMap "c-config"`},
		"KeySecret": {reason: "an imported key's Secret mount",
			err: fmt.Errorf("Secret %q: %w", "ext", notExist("/k/keys/ext/secret")), want: `/k/keys/ext/secret from Secret "ext"`},
		"DNSSECKeys": {reason: "a signed zone whose keys are not in the DNSSEC Secret yet",
			err: fmt.Errorf("%w for signed zone %q", errNoDNSSECKey, "s.test"), want: `/k/dnssec from Secret "c-dnssec"`},
		"CheckconfZoneFile": {reason: "named-checkconf cannot open a zone file in a zones mount",
			err:  &CheckError{Message: "x", Output: "zone p.test/IN: loading from master file /zones/2/p.test.zone failed: file not found\nzone p.test/IN: not loaded due to errors.\n"},
			want: `/zones/2/p.test.zone from ConfigMap "c-zones-2"`},
		"CheckconfIncludePart": {reason: "named-checkconf cannot open a zone's $INCLUDE part",
			err:  &CheckError{Message: "x", Output: "dns_master_load: /zones/0/big.zone:5: /zones/4/big.part1: file not found\nzone big/IN: loading from master file /zones/0/big.zone failed: file not found\n"},
			want: `/zones/4/big.part1 from ConfigMap "c-zones-4"`},
		"CheckconfInclude": {reason: "named-checkconf cannot open an include (a key of a Secret not updated yet): its line names it",
			err:  includeErr(t),
			want: `/k/keys/c-keys/new.conf from Secret "c-keys"`},
		"CheckconfSyntax": {reason: "a config error is a failure",
			err: &CheckError{Message: "unknown option", Output: "/cfg/named.conf.primary:3: unknown option 'bogus'"}},
		"OutsideMounts": {reason: "a missing file outside every input mount (the data volume) is a failure",
			err: notExist("/data/primary/x.zone")},
		"OtherError": {reason: "anything else is a failure", err: errors.New("rndc: connection refused")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if mi := a.missingInput(tc.err); mi != nil {
				got = mi.Path + " from " + mi.From
			}
			if got != tc.want {
				t.Errorf("%s: missingInput(%v) = %q, want %q", tc.reason, tc.err, got, tc.want)
			}
		})
	}
}

// includeErr is named-checkconf's report of an include it cannot open, on a
// config whose line 2 is that include.
func includeErr(t *testing.T) error {
	conf := filepath.Join(t.TempDir(), "named.conf")
	if err := os.WriteFile(conf, []byte("options { };\ninclude \"/k/keys/c-keys/new.conf\";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ParseCheckOutput(conf + ":2: parsing failed: file not found\n")
}

// TestRealNamedArrivalOrder: a change whose files come in three objects
// (the config ConfigMap naming two new zones, the zones ConfigMap with the
// seeded zone's file, another with the other zone's file) is applied in
// every order they arrive, on real named: an order that brings the config
// before a file it needs waits ("waiting for <file> from ConfigMap <name>"
// in /status and the log), never reports a failed apply (no ERROR line, no
// lastError, no reload failure counted), and applies when the file comes.
// A file that never comes fails after the wait bound, saying so.
func TestRealNamedArrivalOrder(t *testing.T) {
	bindtools.RequireBIND(t)
	parts := []string{"config", "zones-1", "zones-2"}
	for _, order := range permutations(parts) {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			l, a := arrivalLab(t, 0)
			waits := 0
			for i, p := range order {
				l.arrive(p)
				if i == len(order)-1 {
					break
				}
				// The agent acts on this arrival before the next: it applies
				// what it can, or waits; a wait names what it waits for.
				want := arrivalWait(l, order[:i+1])
				waitFor(t, bindtools.Hang, "the agent to act on "+p, func() bool {
					st := a.State().Snapshot()
					if st.LastError != nil {
						t.Fatalf("after %v arrived: a failed apply reported (%s), want %q", order[:i+1], st.LastError.Message, want)
					}
					return st.Waiting == want && (want != "" || l.seen(a))
				})
				if want != "" {
					waits++
				}
			}
			waitFor(t, bindtools.Hang, "both new zones served, the wait over", func() bool {
				return a.State().Snapshot().Waiting == "" && cmp.Equal(answers(l.addr(), "ns.added.test", dns.TypeA), []string{"192.0.2.54"}) &&
					cmp.Equal(answers(l.addr(), "www.plain.test", dns.TypeA), []string{"192.0.2.77"})
			})
			st := a.State().Snapshot()
			if st.LastError != nil || st.Waiting != "" {
				t.Errorf("after every arrival: lastError %+v, waiting %q; want neither", st.LastError, st.Waiting)
			}
			m := a.State().Metrics()
			for _, stage := range []string{stageCheckconf, stageRNDC, stagePrepare} {
				if got := value(m.ReloadFailures.WithLabelValues(stage)); got != 0 {
					t.Errorf("reload_failures_total{stage=%s} = %v, want 0: an arrival order is not a failure", stage, got)
				}
			}
			if got := value(m.Waiting); got != 0 {
				t.Errorf("waiting_for_input = %v after the change applied, want 0", got)
			}
			if strings.Contains(l.logs.String(), "level=ERROR") {
				t.Errorf("an ERROR was logged:\n%s", grepLines(l.logs.String(), "level=ERROR"))
			}
			t.Logf("order %v: %d waits", order, waits)
		})
	}

	t.Run("NeverArrives", func(t *testing.T) {
		l, a := arrivalLab(t, time.Second)
		l.arrive("config")
		l.arrive("zones-2") // zones-1, with the seeded zone's file, never comes
		waitFor(t, bindtools.Hang, "the failure after the bound", func() bool { return a.State().Snapshot().LastError != nil })
		e := a.State().Snapshot().LastError
		want := fmt.Sprintf("%s from ConfigMap %q did not arrive within 1s", filepath.Join(l.zonesDir, "1", "added.test.zone"), "lab-zones-1")
		if !strings.Contains(e.Message, want) {
			t.Errorf("lastError %q, want it to say %q", e.Message, want)
		}
		if got := value(a.State().Metrics().ReloadFailures.WithLabelValues(stagePrepare)); got != 1 {
			t.Errorf("reload_failures_total{stage=prepare} = %v, want 1", got)
		}
		if a.State().Snapshot().Waiting != "" {
			t.Errorf("still waiting after the failure: %q", a.State().Snapshot().Waiting)
		}
	})
}

// arrivalLab is a running primary of the lab before the change; bound is
// its wait bound (0: the default).
func arrivalLab(t *testing.T, bound time.Duration) (*arrivals, *Agent) {
	l := &arrivals{lab: newLab(t)}
	res := &fakeResolver{}
	res.set("lab-1.lab-headless", "127.0.0.2")
	l.writeKey("upd-tsig", l.secret)
	l.writeZones(l.zoneFiles(1, "192.0.2.10"))
	l.secondary = l.fixture(layout.NamedConfSecondary, nil)
	l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), l.secondary, l.primaryDoc(nil))
	o := l.options(0, res)
	o.WaitBound = bound
	a, _ := l.run(o)
	waitFor(t, bindtools.Hang, "primary ready", func() bool { return a.State().Snapshot().Ready })
	l.applied = a.State().Snapshot().AppliedConfigHash
	return l, a
}

type arrivals struct {
	*lab
	secondary []byte
	applied   string // the applied hash last seen
}

// arrive lays one object of the change.
func (l *arrivals) arrive(part string) {
	l.t.Helper()
	switch part {
	case "config":
		extra := fmt.Sprintf("zone \"added.test\" {\n\ttype primary;\n\tfile %q;\n};\nzone \"plain.test\" {\n\ttype primary;\n\tfile %q;\n};",
			filepath.Join(l.dataDir, "added.test.zone"), filepath.Join(l.zonesDir, "2", "plain.test.zone"))
		doc := l.primaryDoc(nil)
		doc.SeedZones = append(doc.SeedZones, layout.SeedZone{Zone: "added.test", Source: filepath.Join(l.zonesDir, "1", "added.test.zone"), Dest: filepath.Join(l.dataDir, "added.test.zone")})
		doc.PrimaryZones = append(doc.PrimaryZones, layout.ZoneRef{Zone: "added.test"}, layout.ZoneRef{Zone: "plain.test"})
		l.writeConfig(l.fixture(layout.NamedConfPrimary, map[string]string{"@EXTRA@": extra}), l.secondary, doc)
	case "zones-1":
		l.writeShard(1, map[string][]byte{"added.test.zone": l.fixture("added.test.zone", nil)})
	case "zones-2":
		plain := strings.NewReplacer("static.test", "plain.test", "@SERIAL@", "1", "@WWW@", "192.0.2.77").Replace(string(l.fixture("static.test.zone", nil)))
		l.writeShard(2, map[string][]byte{"plain.test.zone": []byte(plain)})
	default:
		l.t.Fatalf("no part %q", part)
	}
}

func (l *arrivals) writeShard(n int, files map[string][]byte) {
	l.t.Helper()
	if err := kubeletdir.Write(filepath.Join(l.zonesDir, fmt.Sprint(n)), files); err != nil {
		l.t.Fatal(err)
	}
}

// seen: the agent applied something since the last call (an arrival it
// could apply changes the applied hash).
func (l *arrivals) seen(a *Agent) bool {
	h := a.State().Snapshot().AppliedConfigHash
	if h != l.applied {
		l.applied = h
		return true
	}
	return false
}

// arrivalWait is what the agent waits for once the parts in got have
// arrived: the config without the seeded zone's file waits for it (prepare
// comes first); the config with it but without the other zone's file waits
// for that (named-checkconf); otherwise nothing.
func arrivalWait(l *arrivals, got []string) string {
	has := map[string]bool{}
	for _, p := range got {
		has[p] = true
	}
	switch {
	case !has["config"]:
		return ""
	case !has["zones-1"]:
		return fmt.Sprintf("waiting for %s from ConfigMap %q", filepath.Join(l.zonesDir, "1", "added.test.zone"), "lab-zones-1")
	case !has["zones-2"]:
		return fmt.Sprintf("waiting for %s from ConfigMap %q", filepath.Join(l.zonesDir, "2", "plain.test.zone"), "lab-zones-2")
	}
	return ""
}

// permutations of s, in lexical order of positions.
func permutations(s []string) [][]string {
	if len(s) <= 1 {
		return [][]string{append([]string(nil), s...)}
	}
	var out [][]string
	for i := range s {
		rest := append(append([]string(nil), s[:i]...), s[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{s[i]}, p...))
		}
	}
	return out
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
