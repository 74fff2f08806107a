package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestRealNamedTypeChange: DNSRecords whose type changes between two
// renders (A to CNAME, CNAME to A, TXT to CNAME on the same names) are
// served throughout on real named: a query loop over the names during the
// change sees the old data or the new, never NXDOMAIN or an empty answer,
// and the agent converges without an error. A CNAME's add and the delete
// of the name's other data travel in one UPDATE, the delete first; sent
// apart, or the add first, BIND drops the add in silence and the name is
// unserved until a render without the type change.
// A CNAME desired where the zone holds data the agent never wrote (its state
// file lost, another client's record) replaces that data too.
func TestRealNamedTypeChange(t *testing.T) {
	bindtools.RequireBIND(t)
	l, res := pod0Lab(t)
	before := []string{
		"api 300 IN A 192.0.2.1",
		"back 300 IN CNAME www.dyn.test.",
		`note 300 IN TXT "hello"`,
		"www 300 IN A 192.0.2.9",
	}
	after := []string{
		"api 300 IN CNAME www.dyn.test.",
		"back 300 IN A 192.0.2.2",
		"note 300 IN CNAME www.dyn.test.",
		"stray 300 IN CNAME www.dyn.test.",
		"www 300 IN A 192.0.2.9",
	}
	secondary := l.fixture(layout.NamedConfSecondary, nil)
	l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), secondary, l.primaryDoc(before))
	a, _ := l.startConverging(res)
	waitFor(t, bindtools.Hang, "the first records", func() bool {
		return cmp.Equal(answers(l.addr(), "api.dyn.test", dns.TypeA), []string{"192.0.2.1"}) &&
			cmp.Equal(answers(l.addr(), "back.dyn.test", dns.TypeCNAME), []string{"www.dyn.test."}) &&
			cmp.Equal(answers(l.addr(), "note.dyn.test", dns.TypeTXT), []string{`"hello"`})
	})
	// Data at "stray" the agent never wrote: another client's A record.
	key := Key{Name: "upd", Algorithm: "hmac-sha256", Secret: l.secret}
	if err := testUpdate(l.addr(), "dyn.test", key, "stray.dyn.test. 300 IN A 192.0.2.66"); err != nil {
		t.Fatal(err)
	}

	// Every name answers (some data, the old or the new) throughout.
	probes := []struct {
		name string
		typ  uint16
	}{{"api.dyn.test.", dns.TypeA}, {"back.dyn.test.", dns.TypeA}, {"note.dyn.test.", dns.TypeTXT}}
	var mu sync.Mutex
	gaps := map[string]int{}
	total := 0
	ctx, stopProbe := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			for _, p := range probes {
				r, err := query(l.addr(), p.name, p.typ)
				if err != nil {
					continue
				}
				mu.Lock()
				total++
				if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
					gaps[fmt.Sprintf("%s %s: %s, %d answers", p.name, dns.TypeToString[p.typ], dns.RcodeToString[r.Rcode], len(r.Answer))]++
				}
				mu.Unlock()
			}
		}
	}()
	sent := value(a.State().Metrics().UpdatedRRsets.WithLabelValues(opReplace))
	l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), secondary, l.primaryDoc(after))
	waitFor(t, bindtools.Hang, "the changed types sent", func() bool {
		return value(a.State().Metrics().UpdatedRRsets.WithLabelValues(opReplace)) >= sent+4
	})
	// Three passes after that: each must find nothing to do and no error.
	m := a.State().Metrics()
	ok := value(m.Convergences.WithLabelValues(resultOK))
	waitFor(t, bindtools.Hang, "three passes after the change", func() bool {
		c := a.State().Snapshot().LastConvergence
		if c != nil && c.Error != "" {
			t.Fatalf("a pass after the type change failed: %s", c.Error)
		}
		return value(m.Convergences.WithLabelValues(resultOK)) >= ok+3
	})
	stopProbe()
	wg.Wait()

	for _, c := range []struct {
		name string
		typ  uint16
		want []string
	}{
		{"api.dyn.test", dns.TypeCNAME, []string{"www.dyn.test."}},
		{"api.dyn.test", dns.TypeA, []string{"192.0.2.9"}}, // through the CNAME
		{"back.dyn.test", dns.TypeA, []string{"192.0.2.2"}},
		{"back.dyn.test", dns.TypeCNAME, nil},
		{"note.dyn.test", dns.TypeCNAME, []string{"www.dyn.test."}},
		{"stray.dyn.test", dns.TypeCNAME, []string{"www.dyn.test."}},
	} {
		if diff := cmp.Diff(c.want, answers(l.addr(), c.name, c.typ)); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", c.name, dns.TypeToString[c.typ], diff)
		}
	}
	for _, s := range axfrZone(t, l.addr(), "dyn.test", key) {
		for _, gone := range []string{"note.dyn.test. 300 IN TXT", "stray.dyn.test. 300 IN A", "api.dyn.test. 300 IN A", "back.dyn.test. 300 IN CNAME"} {
			if strings.HasPrefix(s, gone) {
				t.Errorf("the zone still holds %q", s)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gaps) > 0 {
		t.Errorf("of %d queries during the change, some found nothing served: %v", total, gaps)
	}
	t.Logf("%d queries during the change, every one answered", total)
}

// testUpdate adds rrs (presentation format) to zone at addr, signed with k.
func testUpdate(addr, zone string, k Key, rrs ...string) error {
	p, err := newTSIG(k)
	if err != nil {
		return err
	}
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			return err
		}
		m.Insert([]dns.RR{rr})
	}
	p.sign(m)
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second, TsigProvider: p}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		return err
	}
	if r.Rcode != dns.RcodeSuccess {
		return fmt.Errorf("update %s: %s", zone, dns.RcodeToString[r.Rcode])
	}
	return nil
}

// TestUpdateMsgOrder: the ops of one name stay together, and in a message
// every delete comes before every add.
func TestUpdateMsgOrder(t *testing.T) {
	rr := func(s string) []dns.RR {
		r, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		return []dns.RR{r}
	}
	ops := []op{
		{key: RRsetKey{"api.z.", dns.TypeCNAME}, rrs: rr("api.z. 300 IN CNAME www.z.")},
		{key: RRsetKey{"www.z.", dns.TypeA}, rrs: rr("www.z. 300 IN A 192.0.2.1")},
		{key: RRsetKey{"api.z.", dns.TypeA}, remove: true},
	}
	groups := nameGroups(ops)
	var got [][]string
	for _, g := range groups {
		var s []string
		for _, o := range g {
			s = append(s, fmt.Sprintf("%s remove=%v", o.key, o.remove))
		}
		got = append(got, s)
	}
	want := [][]string{{"api.z. A remove=true", "api.z. CNAME remove=false"}, {"www.z. A remove=false"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nameGroups (-want +got):\n%s", diff)
	}
	var sec []string
	for _, r := range updateMsg("z.", groups).Ns {
		sec = append(sec, strings.Join(strings.Fields(r.String()), " "))
	}
	wantSec := []string{
		"api.z. 0 CLASS255 A", "api.z. 0 CLASS255 CNAME", "www.z. 0 CLASS255 A",
		"api.z. 300 IN CNAME www.z.", "www.z. 300 IN A 192.0.2.1",
	}
	if diff := cmp.Diff(wantSec, sec); diff != "" {
		t.Errorf("the UPDATE's update section (-want +got):\n%s", diff)
	}
}
