//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
)

// serveIP is the example's serve Service ClusterIP (examples/authoritative).
const serveIP = "10.96.53.53"

// stickyPort is the source port of queryLoop's second loop: one socket,
// as a forwarder keeps (CoreDNS's forward plugin, a node-local cache). It is
// below Linux's ephemeral range, so no other socket takes it.
const stickyPort = 20053

// queryEvery paces each of queryLoop's loops. The example's rateLimit
// (BIND's response rate limiting) answers 20 identical responses per second
// to one /24, and every test query comes from the node's address: the two
// loops together stay under it (16/s) even when both reach one pod, as the
// one-socket loop's and half the other's do while a roll leaves two. Faster,
// named drops answers by design ("rate limit drop response" in its log):
// the loops once sent ~30 queries a second and saw RRL, not the roll.
const queryEvery = 125 * time.Millisecond

// loopResult is what a queryLoop saw.
type loopResult struct {
	queries int
	// failed: no answer, or not the example's address; partial: NOERROR
	// with the CNAME alone; retried: the one-socket loop's queries answered
	// only by their retry.
	failed, partial, retried []string
}

// queryLoop asks the serve Service for www.example.com (a CNAME to the
// apex, whose A record the answer carries) in two loops, one query after
// another, until stop is called:
//
//   - from a new source port each time, one try: every query is a new UDP
//     flow, which kube-proxy sends to a ready endpoint;
//   - from one source port (stickyPort), one retry after 1 s: the flow's
//     conntrack entry keeps it on one pod for as long as that pod's
//     endpoint is serving, terminating or not. A pod that stops named while
//     still serving (a preStop that only sleeps) fails this loop through
//     every retry until kube-proxy drops the entry; the drain
//     (objects.DrainSeconds) makes the pod unready first. The retry
//     covers the one query that may be in flight at the instant the entry
//     is deleted (its answer no longer finds the flow), as a forwarder's
//     own retry does; such queries are reported, not failed.
//
// It returns how many it sent, the failures, each described by the
// response's header and answer and, when podIPs are given, what each pod
// answered to the same question right after, and the partial answers:
// NOERROR with the CNAME alone. BIND 9.20 follows a CNAME only in the zone
// database the query began in, so a query caught across the zone's reload
// (a static-zone change on the primary) or a secondary's AXFR gets the
// CNAME without its target (docs/kubelet-sync.md); a resolver then asks for
// the target itself (RFC 1034 §5.3.3), so no client sees a failure, and it
// is counted, not failed (test/multipod's TestServedThroughChanges does the
// same).
func queryLoop(podIPs ...string) (stop func() loopResult) {
	var n atomic.Int64
	var mu sync.Mutex
	var res loopResult
	done := make(chan struct{})
	var wg sync.WaitGroup
	loop := func(name string, args ...string) {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			sent := time.Now()
			status, answer, retried, err := digTry(append(args, "@"+serveIP, "www.example.com", "A")...)
			n.Add(1)
			ok := err == nil && status == "NOERROR" && strings.Contains(answer, "198.51.100.10")
			if !ok || (err == nil && status == "NOERROR" && cnameAlone(answer)) {
				at := sent.UTC().Format("15:04:05.000") + fmt.Sprintf("+%.1fs", time.Since(sent).Seconds())
				var pods []string
				for _, ip := range podIPs {
					s, a, err := digStatus("@"+ip, "www.example.com", "A")
					pods = append(pods, fmt.Sprintf("%s %s %q %v", ip, s, a, err))
				}
				line := fmt.Sprintf("%s %s: %s %q %v (then each pod: %s)", at, name, status, answer, err, strings.Join(pods, ", "))
				mu.Lock()
				if err == nil && status == "NOERROR" && cnameAlone(answer) {
					res.partial = append(res.partial, line)
				} else {
					res.failed = append(res.failed, line)
				}
				mu.Unlock()
			} else if retried {
				mu.Lock()
				res.retried = append(res.retried, time.Now().UTC().Format("15:04:05.000")+" "+name)
				mu.Unlock()
			}
			time.Sleep(time.Until(sent.Add(queryEvery)))
		}
	}
	wg.Add(2)
	go loop("new port", "+time=2", "+tries=1")
	go loop(fmt.Sprintf("port %d", stickyPort), "+time=1", "+tries=2", "-b", fmt.Sprintf("0.0.0.0#%d", stickyPort))
	return func() loopResult {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		res.queries = int(n.Load())
		return res
	}
}

// cnameAlone reports an answer section (digStatus's) that is exactly the
// example's www CNAME to its apex.
func cnameAlone(answer string) bool {
	f := strings.Fields(answer)
	return len(f) == 5 && f[0] == "www.example.com." && f[2] == "IN" && f[3] == "CNAME" && f[4] == "example.com."
}

// digStatus asks one question with dig and returns the response's status
// (NOERROR, SERVFAIL, …; "" when none came) and its answer section.
func digStatus(args ...string) (status, answer string, err error) {
	status, answer, _, err = digTry(args...)
	return status, answer, err
}

// digTry asks one question (by default one try, 2 s; later arguments such
// as +tries=2 override that) and returns the response's status and answer
// section, and whether a try went unanswered before it (dig's
// ";; communications error" line).
func digTry(args ...string) (status, answer string, retried bool, err error) {
	out, err := exec.Command("dig", append([]string{"+time=2", "+tries=1", "+noall", "+comments", "+answer"}, args...)...).CombinedOutput()
	var ans []string
	for _, l := range strings.Split(string(out), "\n") {
		if _, rest, ok := strings.Cut(l, "status: "); ok {
			status, _, _ = strings.Cut(rest, ",")
		} else if strings.HasPrefix(l, ";; communications error") || strings.HasPrefix(l, ";; connection timed out") {
			retried = true
		} else if l != "" && !strings.HasPrefix(l, ";") {
			ans = append(ans, strings.Join(strings.Fields(l), " "))
		}
	}
	if status == "" {
		err = fmt.Errorf("no response (%v): %s", err, strings.Join(strings.Fields(string(out)), " "))
	}
	return status, strings.Join(ans, "; "), retried && status != "", err
}

// servedEverywhere waits until every pod answers name with want, and
// returns how long it took from t0 and the last pod to answer.
func servedEverywhere(t *testing.T, pods []corev1.Pod, name, want string, t0 time.Time) (time.Duration, string) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var last time.Duration
	var lastPod string
	var errs []string
	for _, p := range pods {
		wg.Add(1)
		go func(p corev1.Pod) {
			defer wg.Done()
			deadline := t0.Add(controlplane.Hang)
			for {
				got, _ := dig("@"+p.Status.PodIP, name, "A")
				if got == want {
					mu.Lock()
					if d := time.Since(t0); d > last {
						last, lastPod = d, p.Name
					}
					mu.Unlock()
					return
				}
				if time.Now().After(deadline) {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("%s (%s) answers %s with %q, want %q", p.Name, p.Status.PodIP, name, got, want))
					mu.Unlock()
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}(p)
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("not served after %s: %s", controlplane.Hang, strings.Join(errs, "; "))
	}
	return last, lastPod
}

// percentile is the nearest-rank percentile of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func seconds(ds []time.Duration) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, " %.2f", d.Seconds())
	}
	return strings.TrimSpace(b.String())
}

// renderPkg runs kpt fn render on the package (the built functions).
func renderPkg(t *testing.T, pkg string) {
	t.Helper()
	render := exec.Command(filepath.Join(bin, "kpt"), "fn", "render", "--allow-exec", pkg)
	render.Dir = filepath.Dir(pkg)
	if out, err := render.CombinedOutput(); err != nil {
		t.Fatalf("kpt fn render: %v\n%s", err, out)
	}
}

func authPods(t *testing.T, ctx context.Context) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods("dns").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=auth"})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// containerLog is a pod's named container log, read where the kubelet
// writes it.
func containerLog(t *testing.T, p corev1.Pod) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join("/var/log/pods", "dns_"+p.Name+"_"+string(p.UID), "named", "*.log"))
	var b strings.Builder
	for _, f := range logs {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// mergeToServed: kubectl apply of a rendered change → answered on every
// pod, 20 times for a record added to a static zone and 20 times for a new
// DNSRecord (the agent's UPDATE), the times reported (p50/p95; budgets in
// BENCHMARKS.md, not here). Asserted: every change is served on every pod,
// the agents read the ConfigMaps through the API server (their log says
// so), no container restarts, and a query loop through the serve Service
// sees no failure the whole time.
func mergeToServed(t *testing.T, ctx context.Context, pkg string, n int) {
	pods := authPods(t, ctx)
	for _, p := range pods {
		log := containerLog(t, p)
		for _, cm := range []string{"auth-config", "auth-zones-0"} {
			found := false
			for _, l := range strings.Split(log, "\n") {
				found = found || (strings.Contains(l, "following the ConfigMap through the API server") && strings.Contains(l, "configmap="+cm+" "))
			}
			if !found {
				t.Errorf("%s: the agent's log does not say it follows ConfigMap %s through the API server:\n%s", p.Name, cm, tail(log, 30))
			}
		}
	}
	var ips []string
	for _, p := range pods {
		ips = append(ips, p.Status.PodIP)
	}
	stop := queryLoop(ips...)
	appendTo := func(file, anchor, add string) {
		p := filepath.Join(pkg, file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if anchor == "" {
			s += add
		} else if i := strings.Index(s, anchor); i >= 0 {
			s = s[:i+len(anchor)] + add + s[i+len(anchor):]
		} else {
			t.Fatalf("%s: %q not found", file, anchor)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	measure := func(what string, change func(i int) (name, want string)) []time.Duration {
		var ds []time.Duration
		var lastPods []string
		for i := 0; i < n; i++ {
			name, want := change(i)
			renderPkg(t, pkg)
			t0 := time.Now()
			kubectl(t, "apply", "--server-side", "-R", "-f", filepath.Join(pkg, "rendered"))
			d, last := servedEverywhere(t, pods, name, want, t0)
			ds = append(ds, d)
			lastPods = append(lastPods, last)
			if d > 2*time.Second { // what the slow pod did meanwhile
				for _, p := range pods {
					if p.Name == last {
						t.Logf("%s took %.2f s on %s; its log from the apply on:\n%s", name, d.Seconds(), last, logSince(containerLog(t, p), t0, d))
					}
				}
			}
		}
		t.Logf("%s, kubectl apply → answered on all %d pods, %d changes: p50 %.2f s, p95 %.2f s, max %.2f s (each: %s; the last pod to answer: %s)",
			what, len(pods), n, percentile(ds, 0.5).Seconds(), percentile(ds, 0.95).Seconds(), percentile(ds, 1).Seconds(), seconds(ds), strings.Join(lastPods, " "))
		return ds
	}
	measure("a record added to a static zone (zones ConfigMap, rndc reload, NOTIFY + IXFR)", func(i int) (string, string) {
		addr := fmt.Sprintf("198.51.100.%d", 130+i)
		appendTo("zones.yaml", "    - {name: sip, type: A, values: [\"198.51.100.60\"]}\n",
			fmt.Sprintf("    - {name: m2s-zone-%d, type: A, values: [%q]}\n", i, addr))
		return fmt.Sprintf("m2s-zone-%d.example.com", i), addr
	})
	measure("a new DNSRecord (config ConfigMap, the agent's UPDATE, NOTIFY + IXFR)", func(i int) (string, string) {
		addr := fmt.Sprintf("198.51.100.%d", 160+i)
		appendTo("records.yaml", "", "---\n"+appsRecord(t, fmt.Sprintf("m2s-rec-%d", i), addr))
		return fmt.Sprintf("m2s-rec-%d.apps.example.com", i), addr
	})
	r := stop()
	queries, failed, partial := r.queries, r.failed, r.partial
	if len(failed) > 0 {
		t.Errorf("%d of %d queries through the serve Service failed during the changes: %s", len(failed), queries, strings.Join(failed[:min(10, len(failed))], "; "))
	}
	if len(partial) > 0 {
		t.Logf("%d of %d answers through the serve Service were the CNAME alone (BIND 9.20's chase across a zone swap; a resolver follows it): %s", len(partial), queries, strings.Join(partial[:min(10, len(partial))], "; "))
	}
	if len(r.retried) > 0 {
		t.Logf("%d one-socket queries were answered by their retry: %s", len(r.retried), strings.Join(r.retried[:min(10, len(r.retried))], "; "))
	}
	for _, p := range authPods(t, ctx) {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount != 0 {
				t.Errorf("%s/%s restarted %d times", p.Name, c.Name, c.RestartCount)
			}
		}
	}
	t.Logf("%d queries through the serve Service (%s) during the changes, %d failed, %d the CNAME alone; no container restarted", queries, serveIP, len(failed), len(partial))
}

// logSince is the lines of a kubelet container log (each starts with its
// RFC 3339 time) from t0 to t0+d, without the agent's rndc zonestatus polls.
func logSince(log string, t0 time.Time, d time.Duration) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		ts, _, _ := strings.Cut(l, " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || at.Before(t0) || at.After(t0.Add(d)) || strings.Contains(l, "control channel command") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
