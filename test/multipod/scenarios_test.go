package multipod

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

func (c *Cluster) tsig(t testing.TB, secret string) TSIG {
	return TSIG{Name: c.secretValue(t, secret, "keyName"), Secret: c.secretValue(t, secret, "secret")}
}

func podIPs(pods []*Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Net.IP)
	}
	return out
}

// scenarioNotify: the cluster's keyed NOTIFYs are accepted (no "refused
// notify" anywhere so far), an unsigned NOTIFY from another address is
// refused and named says so.
func scenarioNotify(t *testing.T, c *Cluster) {
	for _, p := range c.Pods {
		if strings.Contains(p.Log.String(), "refused notify") {
			t.Errorf("%s logged a refused NOTIFY from the cluster itself:\n%s", p.Name, grep(p.Log.String(), "refused notify"))
		}
	}
	sec := c.Pods[1]
	if _, err := notify(sec.Net.IP, labClient, "example.com"); err != nil {
		t.Logf("unsigned NOTIFY: %v (named may not answer a refused one)", err)
	}
	t.Logf("%s: %s", sec.Name, expectRefusedNotify(t, sec))
}

// expectRefusedNotify waits for p to log that it refused the lab client's
// unsigned NOTIFY, and returns the line.
func expectRefusedNotify(t *testing.T, p *Pod) string {
	t.Helper()
	want := "refused notify from non-primary: " + labClient
	if err := eventually(hang, 50*time.Millisecond, func() error {
		if !strings.Contains(p.Log.String(), want) {
			return fmt.Errorf("no %q in the log of %s", want, p.Name)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	return grep(p.Log.String(), want)
}

// checkNoRefusedNotify: every "refused notify" line is the test's own rogue one.
func checkNoRefusedNotify(t *testing.T, pods []*Pod) {
	for _, p := range pods {
		lines := strings.Split(p.Log.String(), "\n")
		for i, l := range lines {
			if strings.Contains(l, "refused notify") && !strings.Contains(l, "non-primary: "+labClient+"#") {
				// What named did just before: whether the NOTIFY came signed, a reload.
				t.Errorf("%s refused a NOTIFY of the cluster: %s\nthe 15 lines before it:\n%s", p.Name, l, strings.Join(lines[max(0, i-15):i], "\n"))
			}
		}
	}
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// scenarioViews: answers by client address and by TSIG key; RRSIGs on the
// secondaries; the internal view's RPZ.
func scenarioViews(t *testing.T, c *Cluster) {
	internalKey := c.tsig(t, "internal-client-tsig")
	for _, p := range c.Pods {
		checks := []struct {
			what  string
			name  string
			o     q
			rcode int
			want  []string
		}{
			{"external client, external view", "intranet.example.com", q{src: labClient, tcp: true}, dns.RcodeNameError, nil},
			{"office client (192.0.2.0/24), internal view", "intranet.example.com", q{src: officeClient, tcp: true}, dns.RcodeSuccess, []string{"192.0.2.20"}},
			{"external client signing with internal-client, internal view", "intranet.example.com", q{src: labClient, tcp: true, key: &internalKey}, dns.RcodeSuccess, []string{"192.0.2.20"}},
			{"external view apex", "example.com", q{src: labClient, tcp: true}, dns.RcodeSuccess, []string{"198.51.100.10"}},
			{"internal view apex", "example.com", q{src: officeClient, tcp: true}, dns.RcodeSuccess, []string{"192.0.2.10"}},
		}
		for _, ck := range checks {
			if err := expect(p.Net.IP, ck.name, dns.TypeA, ck.o, ck.rcode, ck.want); err != nil {
				t.Errorf("%s: %s: %v", p.Name, ck.what, err)
			}
		}
	}
	for _, p := range c.Secondaries() {
		err := eventually(hang, 100*time.Millisecond, func() error {
			r, err := query(p.Net.IP, "www.secure.example.com", dns.TypeA, q{tcp: true, do: true})
			if err != nil {
				return err
			}
			for _, rr := range r.Answer {
				if sig, ok := rr.(*dns.RRSIG); ok && sig.TypeCovered == dns.TypeA {
					return nil
				}
			}
			return fmt.Errorf("no RRSIG in %v", r.Answer)
		})
		if err != nil {
			t.Errorf("%s: secure.example.com is not served signed: %v", p.Name, err)
			r, err := query(c.Pods[0].Net.IP, "www.secure.example.com", dns.TypeA, q{tcp: true, do: true})
			t.Logf("the primary answers: %v %v\n%s", r, err, grep(c.Pods[0].Log.String(), "secure.example.com"))
		}
	}
}

// scenarioResolver: the resolver example, forwarding example.com to the
// auth cluster's serve address, blocks its RPZ names and resolves the rest.
func scenarioResolver(t *testing.T, lab *Lab) {
	r := renderInputs(t, resolverInputs(t), nil)
	res := lab.startCluster(r, "resolver", podPlan{IP: func(i int) string { return fmt.Sprintf("198.18.2.%d", 10+i) }, PrimarySvc: resPrimarySvc})
	res.waitReady(hang)
	for _, p := range res.Pods {
		checks := []struct {
			what, name string
			rcode      int
			want       []string
		}{
			{"forwarded to the auth cluster", "example.com", dns.RcodeSuccess, []string{"198.51.100.10"}},
			{"forwarded, CNAME chased", "www.example.com", dns.RcodeSuccess, []string{"198.51.100.10"}},
			{"RPZ nodata", "ads.example.com", dns.RcodeSuccess, []string{}},
		}
		for _, ck := range checks {
			err := eventually(hang, 200*time.Millisecond, func() error {
				return expect(p.Net.IP, ck.name, dns.TypeA, q{rd: true, wait: 4 * time.Second}, ck.rcode, ck.want)
			})
			if err != nil {
				t.Errorf("%s: %s: %v", p.Name, ck.what, err)
			}
		}
	}
	// malware.example.net (RPZ nxdomain) is outside every forward zone: named
	// recurses before applying the policy (qname-wait-recurse yes) and the lab
	// has no root servers, so it SERVFAILs here. Logged, not asserted.
	r2, err := query(res.Pods[0].Net.IP, "malware.example.net", dns.TypeA, q{rd: true, wait: 4 * time.Second})
	if err == nil {
		t.Logf("malware.example.net (needs recursion to the Internet): %s", dns.RcodeToString[r2.Rcode])
	}
	res.stop()
}

// queryLoop asks every pod, over and over until finished, and keeps every
// answer its check refuses, with the time and the pod.
type queryLoop struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	total    atomic.Int64
	mu       sync.Mutex
	failures []string
}

// startLoop starts one goroutine per pod that calls check with the pod and
// its round's number, pausing between rounds; check returns "" or what was
// wrong.
func startLoop(pods []*Pod, pause time.Duration, check func(p *Pod, i int) string) *queryLoop {
	l := &queryLoop{stop: make(chan struct{})}
	for _, p := range pods {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				bad := check(p, i)
				l.total.Add(1)
				if bad != "" {
					l.mu.Lock()
					l.failures = append(l.failures, time.Now().Format("15:04:05.000")+" "+p.Name+": "+bad)
					l.mu.Unlock()
				}
				time.Sleep(pause)
			}
		}()
	}
	return l
}

// errText is "" for nil, else the error's text.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// startQueryLoop queries every pod continuously (UDP and TCP alternately,
// from both views' clients).
func startQueryLoop(pods []*Pod) *queryLoop {
	probes := []struct{ name, src, want string }{{"mail.example.com", labClient, "198.51.100.25"}, {"intranet.example.com", officeClient, "192.0.2.20"}}
	return startLoop(pods, 20*time.Millisecond, func(p *Pod, i int) string {
		pr := probes[i%len(probes)]
		return errText(expect(p.Net.IP, pr.name, dns.TypeA, q{src: pr.src, tcp: i%4 >= 2, wait: hang}, dns.RcodeSuccess, []string{pr.want}))
	})
}

func (l *queryLoop) finish() (int64, []string) {
	close(l.stop)
	l.wg.Wait()
	return l.total.Load(), l.failures
}

// configChange is the edit of scenario 4: a zone added, a static zone's
// records changed, an ACL and a view (with a zone) added.
func configChange(t testing.TB, in Inputs) Inputs {
	in = in.Edit(t, "BindZone", "example-com", func(obj map[string]any) {
		recs := spec(obj)["records"].([]any)
		for _, r := range recs {
			m := r.(map[string]any)
			if m["name"] == "sip" {
				m["values"] = []any{"198.51.100.61"}
			}
		}
	})
	return in.AddFile(t, "config-change.yaml")
}

// scenarioConfigChange swaps the changed config on every pod, kubelet-style.
func scenarioConfigChange(t *testing.T, c *Cluster, prev *Rendered, in Inputs) (*Rendered, Inputs) {
	in = configChange(t, in)
	next := renderInputs(t, in, prev)
	if diff := cmp.Diff(prev.Clusters[c.Name].StatefulSet.Spec.Template, next.Clusters[c.Name].StatefulSet.Spec.Template); diff != "" {
		// FINDING (reported, not asserted): a new view gets a generated
		// transfer key, i.e. a new Secret volume, and the key-N volume names
		// shift; a real StatefulSet would roll. The lab swaps files only.
		t.Logf("FINDING: the config change alters the pod template (a new view's transfer-key Secret volume); Kubernetes would roll the pods:\n%s", diff)
	}
	pids := c.pids()
	loop := startQueryLoop(c.Pods)
	time.Sleep(300 * time.Millisecond)
	t0 := time.Now()
	c.swap(next)
	swapped := time.Since(t0)
	var pl tcpPoller
	defer pl.close()
	type want struct {
		name  string
		src   string
		value string
	}
	wants := []want{
		{"www.example.org", labClient, "198.51.100.90"},
		{"sip.example.com", labClient, "198.51.100.61"},
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied := map[string]time.Duration{}
	for _, p := range c.Pods {
		for _, w := range wants {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Since(t0) < hang {
					if expect(p.Net.IP, w.name, dns.TypeA, q{src: w.src, tcp: true, wait: time.Second}, dns.RcodeSuccess, []string{w.value}) == nil {
						mu.Lock()
						applied[p.Name+" "+w.name] = time.Since(t0)
						mu.Unlock()
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
		}
		// The new view: a client of the partners ACL gets it (it has no
		// zones, so example.com is refused there).
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(t0) < hang {
				r, err := query(p.Net.IP, "example.com", dns.TypeA, q{src: partnerClient, tcp: true, wait: time.Second})
				if err == nil && r.Rcode == dns.RcodeRefused {
					mu.Lock()
					applied[p.Name+" view partners"] = time.Since(t0)
					mu.Unlock()
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond)
	total, failures := loop.finish()
	var worst time.Duration
	for _, p := range c.Pods {
		for _, k := range []string{" www.example.org", " sip.example.com", " view partners"} {
			d, ok := applied[p.Name+k]
			if !ok {
				t.Errorf("%s: change%s never applied", p.Name, k)
				continue
			}
			worst = max(worst, d)
		}
	}
	t.Logf("config swap (all %d pods, %v to write) applied everywhere within %v; query loop: %d queries, %d failed", len(c.Pods), swapped.Round(time.Microsecond), worst.Round(time.Millisecond), total, len(failures))
	if len(failures) > 0 {
		t.Errorf("%d of %d queries failed during the change:\n%s", len(failures), total, strings.Join(failures[:min(10, len(failures))], "\n"))
	}
	if diff := cmp.Diff(pids, c.pids()); diff != "" {
		t.Errorf("a process restarted (agent, named PIDs, -before +after):\n%s", diff)
	}
	return next, in
}

// scenarioBadConfig swaps in a config BIND rejects on every pod.
func scenarioBadConfig(t *testing.T, c *Cluster, good *Rendered) {
	pids := c.pids()
	c.swapConfigData(func(key, val string) string {
		if !strings.HasPrefix(key, "named.conf") {
			return val
		}
		return strings.Replace(val, "options {\n", "options {\n\tbogus-option yes;\n", 1)
	})
	for _, p := range c.Pods {
		var st AgentStatus
		err := eventually(hang, 50*time.Millisecond, func() error {
			var err error
			st, err = p.Status()
			if err != nil {
				return err
			}
			if st.LastError == nil || st.LastError.Line == 0 || !strings.Contains(st.LastError.File, "named.conf") {
				return fmt.Errorf("/status lastError = %+v, want named.conf file:line", st.LastError)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		loc := fmt.Sprintf("%s:%d", st.LastError.File, st.LastError.Line)
		if !strings.Contains(p.Log.String(), loc) {
			t.Errorf("%s: the log does not name %s:\n%s", p.Name, loc, p.Log.tail(10))
		}
		t.Logf("%s rejected: %s: %s", p.Name, loc, st.LastError.Message)
		for _, ck := range []struct{ name, src, want string }{{"sip.example.com", labClient, "198.51.100.61"}, {"intranet.example.com", officeClient, "192.0.2.20"}} {
			if err := expect(p.Net.IP, ck.name, dns.TypeA, q{src: ck.src, tcp: true}, dns.RcodeSuccess, []string{ck.want}); err != nil {
				t.Errorf("%s: old data no longer served: %v", p.Name, err)
			}
		}
	}
	if diff := cmp.Diff(pids, c.pids()); diff != "" {
		t.Errorf("a process restarted (-before +after):\n%s", diff)
	}
	c.swap(good) // back to the good config
	for _, p := range c.Pods {
		if err := eventually(hang, 50*time.Millisecond, func() error {
			st, err := p.Status()
			if err != nil {
				return err
			}
			if st.LastError != nil {
				return fmt.Errorf("lastError still %+v", st.LastError)
			}
			return nil
		}); err != nil {
			t.Logf("%s after restoring the good config: %v", p.Name, err)
		}
	}
}

// scenarioNotifyTCPRetry: a NOTIFY whose UDP attempt is lost. BIND then
// retries over TCP and sends that retry unsigned (notify_send_toaddr hands the
// also-notify entry's key to the first attempt only), from the primary pod's
// own address, not the primary Service's. The secondary admits it through
// bind-fn-peers (the agent resolves the primary pod's headless name into the
// ACL: layout.PrimaryPodList), refreshes, and serves the change; nothing is
// refused.
//
// BIND 9.18 does not retry a NOTIFY over TCP when the UDP attempt times out
// (seen in this lab: no second NOTIFY, the secondary catches up at its
// refresh): there is nothing to admit, and the scenario is 9.20's.
func scenarioNotifyTCPRetry(t *testing.T, c *Cluster, key TSIG) {
	if rel := bindtools.Current(t); rel.Name == bindtools.BIND918.Name {
		t.Skipf("%s sends no NOTIFY retry over TCP after a lost UDP NOTIFY (9.20 does, unsigned)", rel)
	}
	sec := c.Pods[1]
	prim := c.Pods[0].Net.IP
	rule := []string{"INPUT", "-p", "udp", "--dport", "53", "-s", prim, "-j", "DROP"}
	ipt := func(op string) error {
		out, err := exec.Command("ip", append([]string{"netns", "exec", sec.Net.Name, "iptables", op}, rule...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("iptables %s: %v: %s", op, err, out)
		}
		return nil
	}
	if err := ipt("-A"); err != nil {
		t.Fatal(err)
	}
	dropped := true
	defer func() {
		if dropped {
			_ = ipt("-D")
		}
	}()
	before := len(sec.Log.String())
	name := fmt.Sprintf("tcp-retry-%d.apps.example.com.", time.Now().UnixNano()%1e6)
	if err := update(c.PrimarySvc, "apps.example.com", key, func(m *dns.Msg) {
		m.Insert([]dns.RR{mustRR(name + " 60 IN A 192.0.2.77")})
	}); err != nil {
		t.Fatal(err)
	}
	// The unsigned retry, from the primary pod, accepted (a serial logged
	// for it), with UDP from the primary still dropped.
	unsigned := "client @"
	var seen, refused string
	if err := eventually(hang, 100*time.Millisecond, func() error {
		log := sec.Log.String()[before:]
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, unsigned) && strings.Contains(l, " "+prim+"#") && !strings.Contains(l, "/key ") &&
				strings.Contains(l, "received notify for zone 'apps.example.com'") {
				seen = l
			}
			if strings.Contains(l, "refused notify from non-primary: "+prim+"#") {
				refused = l
				return nil // no point waiting: it has been refused
			}
		}
		if seen == "" {
			return fmt.Errorf("no unsigned NOTIFY for apps.example.com from %s in the log of %s yet", prim, sec.Name)
		}
		if !strings.Contains(log, "zone apps.example.com/IN/external: notify from "+prim+"#") {
			return fmt.Errorf("the unsigned NOTIFY was not taken (no \"notify from %s\")", prim)
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, grep(sec.Log.String()[before:], "notify"))
	}
	if refused != "" {
		t.Fatalf("%s refused the primary pod's unsigned NOTIFY retry: %s\n%s", sec.Name, refused, grep(sec.Log.String()[before:], "notify"))
	}
	t.Logf("%s: %s", sec.Name, seen)
	if err := eventually(hang, 100*time.Millisecond, func() error {
		return expect(sec.Net.IP, name, dns.TypeA, q{src: labClient, tcp: true}, dns.RcodeSuccess, []string{"192.0.2.77"})
	}); err != nil {
		t.Errorf("%s: the change the unsigned NOTIFY announced is not served: %v", sec.Name, err)
	}
	if err := ipt("-D"); err != nil {
		t.Error(err)
	}
	dropped = false
	checkNoRefusedNotify(t, c.Pods)
}
