package multipod

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// importCase is one configuration of internal/importer/testdata run as
// the original server and as the cluster its import renders.
type importCase struct {
	name   string
	origIP string
	podIP  func(i int) string
	svc    string
	// views: the key whose transfers land in each view of the original
	// ("" without views).
	views map[string]viewProbe
	// queries sent to both (recursive for a resolver).
	queries []probeQuery
	// losses the import must report (the lab then excuses nothing else).
	losses int
	// handover: an outside secondary of plain.example (ns2 of its NS set,
	// at outsideIP) transfers from the original, then from the rendered
	// primary; an edit of the zone reaches it and the rendered secondaries
	// with the served serial + 1. journal: an UPDATE the original holds in
	// dyn.example's journal only, which the import (of the files) carries.
	handover, journal bool
}

// outsideIP is plain.example's ns2 (internal/importer/testdata/signed).
const outsideIP = "198.18.10.21"

type viewProbe struct {
	key TSIG
}

type probeQuery struct {
	name  string
	qtype uint16
	src   string
	rd    bool
}

var (
	xferKey     = TSIG{Name: "xfer", Secret: "oKeutbzDytHY3+bt9PsCCRAXHiUsMzpBSE9WXWRrcnk="}
	internalKey = TSIG{Name: "internal-client", Secret: "aW50ZXJuYWwtY2xpZW50LWtleS1tYXRlcmlhbC0xMjM0NTY3ODkw"}
	ddnsKey     = TSIG{Name: "ddns", Secret: "c2VjcmV0LWZvci1kZG5zLWtleS0xMjM0NTY3ODkwMTI="}
)

// TestImportLab proves `bind-fn import` on real BIND (docs/design.md#plan-import). For each
// configuration: the original named.conf runs as it is; the import is
// rendered and run as a cluster (primary + secondary under the agent);
// every zone the import read is transferred from both (AXFR, signed with a
// key of the zone's view) and must hold the same RRsets (DNSSEC records
// and the serial apart), unless the import reported the difference; sample
// queries from a client of each view (and recursive ones through the
// resolver) get the same answers from both. The signed server's import
// also carries an UPDATE that is only in a journal, and hands over: the
// served serial is the floor (docs/import.md#serials) — an outside
// secondary that held it from the original, switched to the rendered
// primary, and the rendered secondaries take the first edit's serial.
func TestImportLab(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, path.Dir(agentBin))
	pods := func(n int) func(int) string {
		return func(i int) string { return fmt.Sprintf("198.18.%d.%d", n, 10+i) }
	}
	// signed first: the views server transfers partner.example.net from it.
	cases := []importCase{
		{name: "signed", origIP: "198.18.10.20", podIP: pods(13), svc: "198.18.12.20", losses: 3, handover: true, journal: true, // update-policy; dyn.example's records agent-owned; no keys in zones/keys for secure.example
			views: map[string]viewProbe{"": {key: xferKey}},
			queries: []probeQuery{{"ads.plain.example", dns.TypeA, labClient, false}, {"mail.plain.example", dns.TypeA, labClient, false},
				{"phish.example", dns.TypeA, labClient, false}, {"www.secure.example", dns.TypeA, labClient, false}}},
		{name: "views", origIP: "198.18.10.10", podIP: pods(11), svc: "198.18.12.10", losses: 2, // dyn.example.com's records agent-owned; partner.example.net's NOTIFYs
			views: map[string]viewProbe{"internal": {key: internalKey}, "external": {key: xferKey}},
			queries: []probeQuery{{"www.example.com", dns.TypeA, officeClient, false}, {"www.example.com", dns.TypeA, labClient, false},
				{"intranet.example.com", dns.TypeA, officeClient, false}, {"intranet.example.com", dns.TypeA, labClient, false},
				{"www.partner.example.net", dns.TypeA, labClient, false},
				{"x.apps.example.com", dns.TypeA, labClient, false}, {"long.example.com", dns.TypeTXT, labClient, false}}},
		{name: "resolver", origIP: "198.18.10.30", podIP: pods(14), svc: "198.18.12.30",
			queries: []probeQuery{{"www.example.com", dns.TypeA, labClient, true}, {"mail.example.com", dns.TypeA, labClient, true}}},
	}
	named := mustLook(t, "named")
	root := bindtools.RepoRoot(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(root, "internal", "importer", "testdata", tc.name)
			dir := filepath.Join(lab.dir, "orig-"+tc.name)
			sh(t, "cp", "-r", src, dir)
			// The original, exactly as written (relative paths from its directory).
			n := lab.addNetns("orig-"+tc.name, tc.origIP)
			log := &syncLog{}
			lab.startProc(n, "", []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, []string{"/bin/sh", "-c", "cd " + shellQuote(dir) + " && exec " + named + " -g -c named.conf"}, log)
			if err := eventually(hang, 100*time.Millisecond, func() error {
				_, err := query(tc.origIP, "version.bind", dns.TypeTXT, q{tcp: true})
				return err
			}); err != nil {
				t.Fatalf("the original server did not start: %v\n%s", err, log.String())
			}

			if tc.name == "signed" {
				// named writes secure.example.db.signed a moment after it
				// answers, and the import reads the signed serial from it
				// (without it the import reports one more loss).
				signed := filepath.Join(dir, "zones", "secure.example.db.signed")
				if err := eventually(hang, 100*time.Millisecond, func() error {
					_, err := os.Stat(signed)
					return err
				}); err != nil {
					t.Fatalf("the original server did not sign secure.example: %v\n%s", err, log.String())
				}
			}

			var outside *outsideSecondary
			if tc.handover {
				// An outside secondary of the original, listed in the zone's
				// NS set (so the original, and the import, notify it).
				outside = lab.startOutsideSecondary(t, "outside-"+tc.name, outsideIP, "plain.example", tc.origIP, xferKey)
				waitSerial(t, "the outside secondary", outsideIP, "plain.example", 10, outside.log)
			}
			if tc.journal {
				// named writes the UPDATE to the journal now, into the file
				// 15 minutes later: the import reads the file meanwhile.
				if err := update(tc.origIP, "dyn.example", ddnsKey, func(m *dns.Msg) {
					m.Insert([]dns.RR{mustRR("fresh.dyn.example. 60 IN A 198.51.100.121")})
				}); err != nil {
					t.Fatalf("UPDATE to the original: %v", err)
				}
				file, _ := os.ReadFile(filepath.Join(dir, "zones", "dyn.example.db"))
				if _, err := os.Stat(filepath.Join(dir, "zones", "dyn.example.db.jnl")); err != nil || strings.Contains(string(file), "fresh") {
					t.Fatalf("the UPDATE is not in the journal only (journal: %v; file:\n%s)", err, file)
				}
			}

			// The import, rendered and started.
			conf, err := namedconf.ReadConf(filepath.Join(dir, "named.conf"), dir, os.ReadFile)
			if err != nil {
				t.Fatal(err)
			}
			// As `bind-fn import` reads them: zone files and signed serials
			// by BIND, keys from the key directory.
			checkzone := bindtools.BINDPath(t, "named-checkzone")
			res, err := importer.Import(conf, importer.Options{Cluster: "imp-" + tc.name, ZoneDir: importer.ZoneDir(conf, dir), Read: os.ReadFile,
				Exists: func(p string) bool { _, err := os.Stat(p); return err == nil }, Glob: filepath.Glob,
				ReadZone: importer.NamedZoneReader(checkzone), SignedSerial: importer.NamedSignedSerial(checkzone)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.journal {
				if !holds(res.Zones, "dyn.example", "fresh.dyn.example.\t60\tIN\tA\t198.51.100.121") {
					t.Errorf("the import of dyn.example's file lacks the UPDATE in its journal")
				}
			}
			if tc.name == "signed" {
				// A dynamic zone live from the server (--axfr), over its file.
				rrs, err := importer.Transfer(tc.origIP, "dyn.example", &importer.TSIG{Name: xferKey.Name, Algorithm: "hmac-sha256", Secret: xferKey.Secret}, hang)
				if err != nil {
					t.Fatal(err)
				}
				res.AddZone("", "dyn.example", "axfr:"+tc.origIP+"/dyn.example", rrs)
			}
			rs, err := res.Check(&testutil.DetRand{})
			if err != nil || rs.HasErrors() {
				t.Fatalf("the import does not render: %v %v", err, rs)
			}
			for _, l := range res.Losses {
				t.Logf("reported as not carried: %s", l)
			}
			if len(res.Losses) != tc.losses {
				t.Errorf("the import reports %d statements not carried, want %d", len(res.Losses), tc.losses)
			}
			items, err := res.Items()
			if err != nil {
				t.Fatal(err)
			}
			// From the import's state: the served serials.
			r := renderInputs(t, Inputs(items), &Rendered{Objs: res.State})
			// The key Secrets the import wrote apart (importExisting keys),
			// as the user would create them.
			for _, sec := range res.Secrets {
				sec := sec.DeepCopy()
				sec.Data = map[string][]byte{}
				for k, v := range sec.StringData {
					sec.Data[k] = []byte(v)
				}
				r.Clusters["imp-"+tc.name].Secrets[sec.Name] = sec
			}
			c := lab.startCluster(r, "imp-"+tc.name, podPlan{IP: tc.podIP, PrimarySvc: tc.svc})
			c.waitReady(hang)
			keys := viewKeys(t, c, r)

			checked := 0
			for _, z := range res.Zones {
				if z.Kind != "zone" {
					continue
				}
				vp := tc.views[z.View]
				orig, err := axfrFromClient(tc.origIP, z.Name, vp.key)
				if err != nil {
					t.Errorf("%s/%s: AXFR from the original: %v", z.View, z.Name, err)
					continue
				}
				var got []dns.RR
				err = eventually(hang, 200*time.Millisecond, func() error {
					got, err = axfrFromClient(c.Pods[0].Net.IP, z.Name, keys[z.View])
					return err
				})
				if err != nil {
					t.Errorf("%s/%s: AXFR from the rendered primary: %v", z.View, z.Name, err)
					continue
				}
				want, _ := plan.ZoneDataOf(withoutDNSSEC(orig))
				have, _ := plan.ZoneDataOf(withoutDNSSEC(got))
				if d := cmp.Diff(want, have); d != "" && !reported(res.Losses, z.File) {
					t.Errorf("%s/%s: the rendered cluster serves other RRsets than the original, and the import reported nothing (-original +rendered):\n%s", z.View, z.Name, d)
				}
				checked++
			}
			for _, pq := range tc.queries {
				servers := []string{tc.origIP, c.Pods[0].Net.IP}
				if len(c.Pods) > 1 {
					servers = append(servers, c.Pods[1].Net.IP)
				}
				var answers []string
				for _, s := range servers {
					var a string
					err := eventually(hang, 200*time.Millisecond, func() error {
						m, err := query(s, pq.name, pq.qtype, q{src: pq.src, rd: pq.rd, tcp: true})
						if err != nil {
							return err
						}
						a = answerText(m)
						if pq.rd && m.Rcode == dns.RcodeServerFailure {
							return fmt.Errorf("SERVFAIL")
						}
						return nil
					})
					if err != nil {
						t.Errorf("%s %s from %s to %s: %v", pq.name, dns.TypeToString[pq.qtype], pq.src, s, err)
					}
					answers = append(answers, a)
				}
				for i := 1; i < len(answers); i++ {
					if answers[i] != answers[0] {
						t.Errorf("%s %s from %s: the original answers\n%s\nthe rendered pod %s answers\n%s", pq.name, dns.TypeToString[pq.qtype], pq.src, answers[0], servers[i], answers[i])
					}
				}
			}
			t.Logf("%s: %d zones identical by AXFR, %d queries answered alike, %d statements reported not carried", tc.name, checked, len(tc.queries), len(res.Losses))
			if tc.handover {
				handOver(t, c, Inputs(items), r, outside)
			}
		})
	}
}

// handOver: the rendered primary serves plain.example with the serial
// the original served (10); the outside secondary, switched to it, keeps
// it; an edited record renders serial 11, which the rendered secondaries
// and the outside secondary (notified: it is ns2 of the zone) transfer.
// With the serial pinned (imports before the floor) the edit's render was
// refused: "cannot change zone ... without changing its serial 10".
func handOver(t *testing.T, c *Cluster, items Inputs, r *Rendered, outside *outsideSecondary) {
	t.Helper()
	primary := c.Pods[0].Net.IP
	for _, p := range c.Pods {
		waitSerial(t, "rendered pod "+p.Name+", as imported", p.Net.IP, "plain.example", 10, p.Log)
	}
	outside.switchTo(t, primary)
	waitSerial(t, "the outside secondary, switched to the rendered primary", outsideIP, "plain.example", 10, outside.log)
	edited := items.Edit(t, "BindZone", "plain.example", func(obj map[string]any) {
		for _, rec := range spec(obj)["records"].([]any) {
			if rec := rec.(map[string]any); rec["name"] == "mail" {
				rec["values"] = []any{"198.51.100.26"}
			}
		}
	})
	c.swap(renderInputs(t, edited, r))
	for _, p := range c.Pods {
		waitSerial(t, "rendered pod "+p.Name+", edited", p.Net.IP, "plain.example", 11, p.Log)
	}
	waitSerial(t, "the outside secondary, after the edit", outsideIP, "plain.example", 11, outside.log)
	answerHas(t, "the outside secondary", outsideIP, "mail.plain.example", dns.TypeA, "198.51.100.26")
}

// holds says whether the import read record (as miekg/dns prints it) in
// zone.
func holds(zones []importer.Zone, zone, record string) bool {
	for _, z := range zones {
		if z.Name != zone {
			continue
		}
		for _, rr := range z.RRs {
			if rr.String() == record {
				return true
			}
		}
	}
	return false
}

func withoutDNSSEC(rrs []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		if !dnssecTypes[rr.Header().Rrtype] {
			out = append(out, rr)
		}
	}
	return out
}

// reported says whether the import listed a difference in this zone file.
func reported(losses []importer.Loss, file string) bool {
	for _, l := range losses {
		if strings.HasPrefix(l.Where, file+":") || strings.HasPrefix(l.Where, file) {
			return true
		}
	}
	return false
}

// answerText is a response's rcode, AA bit and answer RRsets, sorted.
func answerText(m *dns.Msg) string {
	var rrs []string
	for _, rr := range m.Answer {
		if dnssecTypes[rr.Header().Rrtype] {
			continue
		}
		rrs = append(rrs, rr.String())
	}
	sort.Strings(rrs)
	return fmt.Sprintf("%s aa=%v\n%s", dns.RcodeToString[m.Rcode], m.Authoritative, strings.Join(rrs, "\n"))
}
