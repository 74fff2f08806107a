package multipod

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
)

// scenarioRecords: DNSRecords of the dynamic zone edited, re-rendered and
// swapped; the primary's agent converges them by UPDATE and every pod
// serves the result. The apex NS stays the BindZone's.
func scenarioRecords(t *testing.T, c *Cluster, prev *Rendered, in Inputs, keep string) (*Rendered, Inputs) {
	in = in.Edit(t, "DNSRecord", "shop", func(obj map[string]any) { spec(obj)["values"] = []any{"198.51.100.122"} })
	in = in.Remove(t, "DNSRecord", "api")
	in = in.AddFile(t, "records-cdn.yaml")
	next := renderInputs(t, in, prev)
	pids := c.pids()
	t0 := time.Now()
	c.swap(next)
	checks := []struct {
		name  string
		qtype uint16
		rcode int
		want  []string
	}{
		{"shop.apps.example.com", dns.TypeA, dns.RcodeSuccess, []string{"198.51.100.122"}},
		{"api.apps.example.com", dns.TypeCNAME, dns.RcodeNameError, nil},
		{"cdn.apps.example.com", dns.TypeAAAA, dns.RcodeSuccess, []string{"2001:db8::130"}},
		{"apps.example.com", dns.TypeNS, dns.RcodeSuccess, []string{"ns1.example.com."}},
	}
	if keep != "" { // a record written by another client (external-dns) stays
		checks = append(checks, struct {
			name  string
			qtype uint16
			rcode int
			want  []string
		}{keep, dns.TypeA, dns.RcodeSuccess, nil})
	}
	var worst time.Duration
	for _, p := range c.Pods {
		for _, ck := range checks {
			err := eventually(hang, 20*time.Millisecond, func() error {
				return expect(p.Net.IP, ck.name, ck.qtype, q{tcp: true}, ck.rcode, ck.want)
			})
			if err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
		}
		worst = max(worst, time.Since(t0))
	}
	st, _ := c.Pods[0].Status()
	t.Logf("DNSRecords converged on every pod within %v (primary's last convergence: %+v)", worst.Round(time.Millisecond), st.LastConvergence)
	if diff := cmp.Diff(pids, c.pids()); diff != "" {
		t.Errorf("a process restarted (-before +after):\n%s", diff)
	}
	return next, in
}

// updater sends a stream of TSIG-signed updates through the primary Service
// and records which were acknowledged.
type updater struct {
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	acked []string
	fails atomic.Int64
}

func startUpdater(c *Cluster, key TSIG, tag string) *updater {
	u := &updater{stop: make(chan struct{})}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-u.stop:
				return
			default:
			}
			name := fmt.Sprintf("%s-%d.apps.example.com.", tag, i)
			err := update(c.PrimarySvc, "apps.example.com", key, func(m *dns.Msg) {
				m.Insert([]dns.RR{mustRR(name + " 60 IN A 198.51.100.7")})
			})
			if err == nil {
				u.mu.Lock()
				u.acked = append(u.acked, name)
				u.mu.Unlock()
			} else {
				u.fails.Add(1)
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return u
}

func (u *updater) count() int { u.mu.Lock(); defer u.mu.Unlock(); return len(u.acked) }

func (u *updater) finish() []string {
	close(u.stop)
	u.wg.Wait()
	return u.acked
}

// checkAcked: every acknowledged update is served by every pod.
func checkAcked(t *testing.T, c *Cluster, acked []string) {
	var pl tcpPoller
	defer pl.close()
	for _, p := range c.Pods {
		var missing []string
		err := eventually(hang, 200*time.Millisecond, func() error {
			missing = missing[:0]
			for _, n := range acked {
				if !pl.has(p.Net.IP, n, dns.TypeA, "198.51.100.7") {
					missing = append(missing, n)
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("%d of %d acknowledged updates missing: %s", len(missing), len(acked), strings.Join(missing[:min(5, len(missing))], " "))
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
}

// scenarioPrimaryRestart: pod 0 killed, back on a new IP behind the same
// primary Service; updates keep flowing, none acknowledged is lost, the
// secondaries do not restart.
func scenarioPrimaryRestart(t *testing.T, lab *Lab, c *Cluster, key TSIG) {
	p0 := c.Pods[0]
	secPIDs := map[string][2]int{}
	for _, p := range c.Secondaries() {
		a, n := p.PIDs()
		secPIDs[p.Name] = [2]int{a, n}
	}
	u := startUpdater(c, key, "pr")
	waitAcked(t, u, 10)
	p0.stop()
	old := p0.Net.IP
	lab.setIP(p0.Net, authNewIP(0))
	c.updateHosts()
	p0.start()
	p0.waitReady(hang)
	n := u.count()
	waitAcked(t, u, n+20)
	acked := u.finish()
	t.Logf("primary moved %s → %s; %d updates acknowledged across the restart (%d refused or failed while it was down)", old, p0.Net.IP, len(acked), u.fails.Load())
	checkAcked(t, c, acked)
	after := map[string][2]int{}
	for _, p := range c.Secondaries() {
		a, n := p.PIDs()
		after[p.Name] = [2]int{a, n}
	}
	if diff := cmp.Diff(secPIDs, after); diff != "" {
		t.Errorf("a secondary restarted (-before +after):\n%s", diff)
	}
	checkNoRefusedNotify(t, c.Pods)
}

func waitAcked(t *testing.T, u *updater, n int) {
	t.Helper()
	if err := eventually(hang, 20*time.Millisecond, func() error {
		if u.count() < n {
			return fmt.Errorf("only %d of %d updates acknowledged", u.count(), n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// scenarioSecondaryRestart: a secondary back on a new IP; the primary's
// agent re-resolves it and re-points also-notify; NOTIFYs reach it.
func scenarioSecondaryRestart(t *testing.T, lab *Lab, c *Cluster, key TSIG) {
	p0, s := c.Pods[0], c.Pods[len(c.Pods)-1]
	a0, n0 := p0.PIDs()
	s.stop()
	lab.setIP(s.Net, authNewIP(s.Ordinal))
	c.updateHosts()
	t0 := time.Now()
	s.start()
	s.waitReady(hang)
	err := eventually(hang, 100*time.Millisecond, func() error {
		st, err := p0.Status()
		if err != nil {
			return err
		}
		for _, pl := range st.Peers {
			if strings.HasPrefix(pl.List, "bind-fn-secondaries") && !contains(pl.IPs, s.Net.IP) {
				return fmt.Errorf("list %s = %v, want %s", pl.List, pl.IPs, s.Net.IP)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the primary's agent did not re-point also-notify: %v", err)
	}
	t.Logf("%s back on %s; the primary's server lists followed %v after the restart", s.Name, s.Net.IP, time.Since(t0).Round(time.Millisecond))
	// NOTIFY, not the 300 s refresh timer, must bring each update.
	res := measure(t, "after a secondary moved", c.PrimarySvc, podIPs(c.Secondaries()), "apps.example.com", key, 10, hang)
	t.Log(res)
	if !strings.Contains(s.Log.String(), "notify from "+p0.Net.IP) {
		t.Errorf("%s logged no NOTIFY from the primary %s:\n%s", s.Name, p0.Net.IP, s.Log.tail(20))
	}
	if a, n := p0.PIDs(); a != a0 || n != n0 {
		t.Errorf("the primary restarted: agent %d→%d named %d→%d", a0, a, n0, n)
	}
	checkNoRefusedNotify(t, c.Pods)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
