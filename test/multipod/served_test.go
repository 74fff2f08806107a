package multipod

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
)

// servedChanges is how many changes of each kind TestServedThroughChanges
// makes (at least 20, for a p50 and a p95); BINDFN_SERVED_CHANGES asks
// for more (a longer hunt for a rare failure).
func servedChanges(t *testing.T) int {
	n := 20
	if v := os.Getenv("BINDFN_SERVED_CHANGES"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || m < n {
			t.Fatalf("BINDFN_SERVED_CHANGES=%q: want a number of at least %d", v, n)
		}
		n = m
	}
	return n
}

// TestServedThroughChanges (docs/kubelet-sync.md, "What a change makes
// named do"): examples/authoritative (views, a
// catalog of the external view's zones on the secondaries, a dynamic zone)
// is changed servedChanges times by a record added to the static zone
// example.com and servedChanges times by a new DNSRecord of the dynamic
// zone, each a new render swapped onto every pod the way the agent lays its
// ConfigMaps. A query loop asks every pod directly throughout; every
// response must be the answer the pod gave before the changes (rcode and
// records), and no process may restart. One kind is reported, not failed
// (BINDFN_SERVED_STRICT=1 fails it): the CNAME alone, which BIND 9.20 gives
// a query that straddles its zone's reload (servedLoop.chased). The time
// from the swap to the new record answered by every pod is reported
// (BENCHMARKS.md), not asserted.
func TestServedThroughChanges(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	in := authInputs(t)
	r := renderInputs(t, in, nil)
	c := lab.startCluster(r, "auth", podPlan{IP: authIP, PrimarySvc: authPrimarySvc, Extra: map[int][]string{1: {authServeVIP}}})
	c.waitReady(hang)
	pids := c.pids()
	loop := startServedLoop(t, c.Pods)

	zone := func(i int) (Inputs, string, string) {
		name, ip := fmt.Sprintf("z%d", i), fmt.Sprintf("203.0.113.%d", 1+i%250)
		return in.Edit(t, "BindZone", "example-com", func(obj map[string]any) {
			recs := spec(obj)["records"].([]any)
			spec(obj)["records"] = append(recs, map[string]any{"name": name, "type": "A", "values": []any{ip}})
		}), name + ".example.com", ip
	}
	record := func(i int) (Inputs, string, string) {
		name, ip := fmt.Sprintf("r%d", i), fmt.Sprintf("198.51.100.%d", 1+i%250)
		return in.AddFixture(t, "a-record.yaml", map[string]string{"NAME": name, "ZONE_REF": "apps-example-com", "ADDRESS": ip}), name + ".apps.example.com", ip
	}
	var zoneTimes, recTimes propagation
	zoneTimes.label, recTimes.label = "static-zone record (zones ConfigMap)", "DNSRecord (dynamic zone)"
	zoneTimes.secs, recTimes.secs = len(c.Pods)-1, len(c.Pods)-1
	// What each pod's named was asked over rndc in a phase: a static zone's
	// record is reloaded on the pod that loads it from the mount (the
	// primary) alone, and a DNSRecord asks named for nothing (the agent
	// converges it by UPDATE).
	wantRNDC := map[*propagation][]string{
		&zoneTimes: {"reload example.com IN external"},
		&recTimes:  nil,
	}
	for _, ph := range []struct {
		res  *propagation
		next func(int) (Inputs, string, string)
	}{{&zoneTimes, zone}, {&recTimes, record}} {
		marks := logMarks(c.Pods)
		for i := range servedChanges(t) {
			var name, ip string
			in, name, ip = ph.next(i)
			next := renderInputs(t, in, r)
			d, err := c.swapUntilServed(next, name, ip)
			if err != nil {
				t.Fatalf("%s %d: %v", ph.res.label, i, err)
			}
			ph.res.times = append(ph.res.times, d)
			r = next
		}
		for i, p := range c.Pods {
			var want []string
			if i == 0 {
				want = wantRNDC[ph.res]
			}
			if diff := cmp.Diff(want, rndcCommands(p.Log.String()[marks[i]:])); diff != "" {
				t.Errorf("%s: %s: named's rndc commands (-want +got):\n%s", ph.res.label, p.Name, diff)
			}
		}
	}
	time.Sleep(time.Second) // the last change's aftermath, still under the loop
	total, failures, chased := loop.finish()
	t.Logf("time from the swap to the record answered by all %d pods (%s):\n%s\n%s", len(c.Pods), lab.release, zoneTimes, recTimes)
	t.Logf("query loop: %d queries to every pod directly, %d not the expected answer, %d the CNAME alone", total, len(failures), len(chased))
	if len(failures) > 0 {
		t.Errorf("%d of %d queries were not answered as before the changes:\n%s", len(failures), total, strings.Join(failures[:min(40, len(failures))], "\n"))
	}
	if len(chased) > 0 {
		msg := fmt.Sprintf("KNOWN (docs/kubelet-sync.md): %d of %d queries got the CNAME without its target, a chase across the zone's reload or AXFR:\n%s", len(chased), total, strings.Join(chased[:min(10, len(chased))], "\n"))
		if os.Getenv("BINDFN_SERVED_STRICT") == "1" {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
	if diff := cmp.Diff(pids, c.pids()); diff != "" {
		t.Errorf("a process restarted (agent, named PIDs, -before +after):\n%s", diff)
	}
	for _, p := range c.Pods {
		t.Logf("%s: %s", p.Name, applyCounts(p.Log.String()))
	}
}

// applyCounts summarises what a pod's agent ran for the changes: how many
// changes had nothing for named to load, how many rndc commands of each
// kind the applied changes ran (one "applied change" line lists them all,
// `rndc="reload a IN v; addzone b IN v"`), and the dynamic-zone passes
// that changed records.
func applyCounts(log string) string {
	kinds := []string{"reconfig", "reload", "addzone", "modzone", "delzone"}
	n := map[string]int{}
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, "msg=\"applied change\"") {
			continue
		}
		for _, cmd := range rndcOfLine(l) {
			n[strings.Fields(cmd)[0]]++
		}
	}
	parts := []string{fmt.Sprintf("nothing for named to load ×%d", strings.Count(log, "nothing for named to load"))}
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, n[k]))
	}
	parts = append(parts, fmt.Sprintf("dynamic zones converged ×%d", strings.Count(log, "dynamic zones converged")))
	return strings.Join(parts, ", ")
}

// rndcOfLine are the rndc commands of an agent's "applied change" log line
// (slog text: the rndc value is quoted when it holds a space).
func rndcOfLine(l string) []string {
	_, v, ok := strings.Cut(l, " rndc=")
	if !ok {
		return nil
	}
	if q, err := strconv.QuotedPrefix(v); err == nil {
		v, _ = strconv.Unquote(q)
	} else {
		v, _, _ = strings.Cut(v, " ")
	}
	var out []string
	for _, c := range strings.Split(v, "; ") {
		if strings.TrimSpace(c) != "" {
			out = append(out, c)
		}
	}
	return out
}

// logMarks are the lengths of the pods' logs now.
func logMarks(pods []*Pod) []int {
	var out []int
	for _, p := range pods {
		out = append(out, len(p.Log.String()))
	}
	return out
}

// rndcCommands are the distinct control channel commands named logged, sorted.
func rndcCommands(log string) []string {
	seen := map[string]bool{}
	for _, l := range strings.Split(log, "\n") {
		if _, rest, ok := strings.Cut(l, "received control channel command '"); ok {
			seen[strings.TrimSuffix(rest, "'")] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// swapUntilServed lays r on every pod and waits until every pod answers
// name A with ip; it returns the time from the swap.
func (c *Cluster) swapUntilServed(r *Rendered, name, ip string) (time.Duration, error) {
	var pl tcpPoller
	defer pl.close()
	t0 := time.Now()
	c.swap(r)
	for _, p := range c.Pods {
		err := eventually(hang, 5*time.Millisecond, func() error {
			if pl.has(p.Net.IP, name, dns.TypeA, ip) {
				return nil
			}
			return fmt.Errorf("%s does not answer %s A %s", p.Name, name, ip)
		})
		if err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

// servedLoop queries every pod directly (UDP and TCP, from both views'
// clients) and keeps every response that differs from the pod's first.
type servedLoop struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	total    atomic.Int64
	mu       sync.Mutex
	failures []string
	// chased are responses that hold the CNAME of the expected answer
	// alone: BIND 9.20 chases a CNAME only in the database the first
	// lookup used, so a query straddling a reload of the zone (or a
	// secondary's AXFR of it) gets the CNAME without its target
	// (docs/kubelet-sync.md). Reported, failing only with
	// BINDFN_SERVED_STRICT=1: a static zone's change swaps its database.
	chased []string
}

// cnameAlone reports whether r holds exactly want's CNAME records and
// nothing else, where want holds more.
func cnameAlone(r, want *dns.Msg) bool {
	if r == nil || r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(r.Answer) == 0 {
		return false
	}
	var cnames []string
	for _, rr := range want.Answer {
		if rr.Header().Rrtype == dns.TypeCNAME {
			cnames = append(cnames, describeRR(rr))
		}
	}
	if len(cnames) == 0 || len(cnames) == len(want.Answer) || len(r.Answer) != len(cnames) {
		return false
	}
	for _, rr := range r.Answer {
		if !slices.Contains(cnames, describeRR(rr)) {
			return false
		}
	}
	return true
}

func describeRR(rr dns.RR) string {
	rr = dns.Copy(rr)
	rr.Header().Ttl = 0
	return rr.String()
}

// servedProbe is one question the loop asks, with the client whose view
// answers it.
type servedProbe struct {
	name  string
	qtype uint16
	src   string
}

var servedProbes = []servedProbe{
	{"www.example.com", dns.TypeA, labClient},        // external: catalog member on the secondaries
	{"mail.example.com", dns.TypeA, labClient},       // external, the zone every change edits
	{"shop.apps.example.com", dns.TypeA, labClient},  // external, the dynamic zone
	{"www.secure.example.com", dns.TypeA, labClient}, // external, inline-signed
	{"intranet.example.com", dns.TypeA, officeClient},
}

// describe is a response as the loop compares it: rcode, flags and every
// answer RR without its TTL.
func describe(r *dns.Msg) string {
	var rrs []string
	for _, rr := range r.Answer {
		rrs = append(rrs, describeRR(rr))
	}
	slices.Sort(rrs)
	return fmt.Sprintf("%s aa=%v tc=%v [%s]", dns.RcodeToString[r.Rcode], r.Authoritative, r.Truncated, strings.Join(rrs, "; "))
}

func startServedLoop(t *testing.T, pods []*Pod) *servedLoop {
	t.Helper()
	l := &servedLoop{stop: make(chan struct{})}
	for _, p := range pods {
		want := map[string]string{}
		wantMsg := map[string]*dns.Msg{}
		for _, pr := range servedProbes {
			r, err := query(p.Net.IP, pr.name, pr.qtype, q{src: pr.src, tcp: true})
			if err != nil {
				t.Fatalf("%s: %s: %v", p.Name, pr.name, err)
			}
			if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
				t.Fatalf("%s: %s before the changes: %s", p.Name, pr.name, describe(r))
			}
			want[pr.name], wantMsg[pr.name] = describe(r), r
		}
		loops := servedLoops(t)
		for g := range loops {
			l.wg.Add(1)
			go l.ask(p, want, wantMsg, g, loops > 1)
		}
	}
	return l
}

// servedLoops is how many query loops ask each pod at once (1;
// BINDFN_SERVED_LOOPS asks for more, a denser hunt).
func servedLoops(t *testing.T) int {
	if v := os.Getenv("BINDFN_SERVED_LOOPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("BINDFN_SERVED_LOOPS=%q: want a positive number", v)
		}
		return n
	}
	return 1
}

// ask is one loop of questions to p, starting at probe g, alternating UDP
// and TCP, or TCP alone (a dense loop: over UDP the example's response rate
// limit, 20/s per name and client, would drop and truncate answers).
func (l *servedLoop) ask(p *Pod, want map[string]string, wantMsg map[string]*dns.Msg, g int, tcpOnly bool) {
	defer l.wg.Done()
	for i := g; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		pr := servedProbes[i%len(servedProbes)]
		tcp := tcpOnly || (i/len(servedProbes))%2 == 1
		r, err := query(p.Net.IP, pr.name, pr.qtype, q{src: pr.src, tcp: tcp, wait: 2 * time.Second})
		l.total.Add(1)
		got := ""
		if err != nil {
			got = "error " + err.Error()
		} else {
			got = describe(r)
		}
		if got != want[pr.name] {
			proto := "udp"
			if tcp {
				proto = "tcp"
			}
			line := fmt.Sprintf("%s %s %s %s (%s): %s, want %s", time.Now().Format("15:04:05.000"), p.Name, pr.name, dns.TypeToString[pr.qtype], proto, got, want[pr.name])
			l.mu.Lock()
			if err == nil && cnameAlone(r, wantMsg[pr.name]) {
				l.chased = append(l.chased, line)
			} else {
				l.failures = append(l.failures, line)
			}
			l.mu.Unlock()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (l *servedLoop) finish() (total int64, failures, chased []string) {
	close(l.stop)
	l.wg.Wait()
	return l.total.Load(), l.failures, l.chased
}

func TestCNAMEAlone(t *testing.T) {
	msg := func(rcode int, aa bool, rrs ...string) *dns.Msg {
		m := &dns.Msg{}
		m.Rcode, m.Authoritative = rcode, aa
		for _, s := range rrs {
			m.Answer = append(m.Answer, mustRR(s))
		}
		return m
	}
	cname, a := "www.example.com. 300 IN CNAME example.com.", "example.com. 300 IN A 198.51.100.10"
	want := msg(dns.RcodeSuccess, true, cname, a)
	cases := map[string]struct {
		reason string
		got    *dns.Msg
		want   *dns.Msg
		alone  bool
	}{
		"CNAMEAlone":  {reason: "the chase across a reload: the CNAME, no target", got: msg(dns.RcodeSuccess, true, "www.example.com. 0 IN CNAME example.com."), want: want, alone: true},
		"Full":        {reason: "the whole answer is not a partial one", got: want, want: want},
		"Empty":       {reason: "no records at all is a failure", got: msg(dns.RcodeSuccess, true), want: want},
		"Refused":     {reason: "a refusal is a failure", got: msg(dns.RcodeRefused, false), want: want},
		"OtherCNAME":  {reason: "a CNAME to somewhere else is a failure", got: msg(dns.RcodeSuccess, true, "www.example.com. 300 IN CNAME example.net."), want: want},
		"NotAA":       {reason: "an answer without AA is not the zone's", got: msg(dns.RcodeSuccess, false, cname), want: want},
		"NoCNAMEWant": {reason: "a name without a CNAME has no partial answer", got: msg(dns.RcodeSuccess, true, a), want: msg(dns.RcodeSuccess, true, a, "example.com. 300 IN A 198.51.100.11")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.alone, cnameAlone(tc.got, tc.want)); diff != "" {
				t.Errorf("%s\ncnameAlone (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestApplyCounts(t *testing.T) {
	cases := map[string]struct {
		reason string
		log    string
		want   string
	}{
		"Several": {
			reason: "one apply lists every command it ran; each is counted, not only the first",
			log: `time=x level=INFO msg="applied change" rndc="delzone a IN external; addzone a IN internal; reload b IN external" took=3ms
time=x level=INFO msg="applied change" rndc=reconfig took=9ms
time=x level=INFO msg="applied change: nothing for named to load" took=1ms
time=x level=INFO msg="dynamic zones converged" updated=1`,
			want: "nothing for named to load ×1, reconfig ×1, reload ×1, addzone ×1, modzone ×0, delzone ×1, dynamic zones converged ×1",
		},
		"Empty": {
			reason: "no change: every count is zero",
			want:   "nothing for named to load ×0, reconfig ×0, reload ×0, addzone ×0, modzone ×0, delzone ×0, dynamic zones converged ×0",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, applyCounts(tc.log)); diff != "" {
				t.Errorf("%s: applyCounts (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
