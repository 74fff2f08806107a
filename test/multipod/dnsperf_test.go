package multipod

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The query-throughput benchmark (BENCHMARKS.md, "Query throughput: one
// rendered pod against a hand-written named.conf"): dnsperf against one
// rendered pod (the real agent running named from the rendered config) and
// against a minimal hand-written named.conf serving the same zone file on
// the same BIND, in the same run, named pinned to 1 and then 2 cores. A
// benchmark, not a test: opt in with BINDFN_DNSPERF=1
// (hack/bench-dnsperf.sh runs it for both releases); it asserts only that
// both servers answer.
const (
	perfZone  = "perf.test"
	perfHosts = 1000
	// perfRounds rounds of perfSeconds per server, the order alternating
	// (rendered first, then hand-written first): each round's ratio sees
	// the shared machine's load of its own few seconds, and the median of
	// the rounds' ratios is what BENCHMARKS.md reports.
	perfRounds  = 6
	perfSeconds = 4
	// perfBlocked is the RPZ case's rule count (one matches a served name,
	// queried once in about perfHosts: what a blocklist costs the answers
	// it does not rewrite).
	perfBlocked = 1000
)

// The addresses of case i: a lab's network namespaces live until its end,
// so every case has its own.
func perfAddrs(i int) (pod, svc, ref string) {
	return fmt.Sprintf("198.18.20.%d", 10+i), fmt.Sprintf("198.18.21.%d", 10+i), fmt.Sprintf("198.18.22.%d", 10+i)
}

// perfCase is one configuration class: the package's objects (the zone
// added to each view), the hand-written server's config around the same
// zone file, and whether queries ask for DNSSEC.
type perfCase struct {
	name    string
	objects string
	ref     func(zoneFile string) string
	do      bool
	// zoneKey is the zones ConfigMap key of the zone file the reference serves.
	zoneKey string
	// refOptions go into the hand-written config's options.
	refOptions string
	// extra are more rendered zone files the reference serves: the
	// ConfigMap key's prefix → the file name its config names.
	extra map[string]string
}

// perfZoneObject is testdata/dnsperf/zone.yaml, in view (none: ""), with
// more spec lines and perfHosts A records.
func perfZoneObject(t *testing.T, name, view, spec string) string {
	t.Helper()
	if view != "" {
		spec = "  viewRef: " + view + "\n" + spec
	}
	var b strings.Builder
	b.WriteString(fixture(t, "dnsperf/zone.yaml", map[string]string{"NAME": name, "ZONE": perfZone, "SPEC": spec}))
	for i := range perfHosts {
		fmt.Fprintf(&b, "    - {name: host-%d, type: A, values: [\"198.18.%d.%d\"]}\n", i, 100+i/250, 1+i%250)
	}
	return b.String()
}

const perfOptions = `options {
	directory %q; pid-file "named.pid"; session-keyfile "session.key";
	listen-on { %s; }; listen-on-v6 { none; }; recursion no;
	%s
};
`

// perfPolicy is a BindPolicy of perfBlocked NXDOMAIN rules: host-0 of the
// served zone (so that the policy is seen to apply) and names outside it.
func perfPolicy(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(fixture(t, "dnsperf/policy.yaml", map[string]string{"ZONE": perfZone}))
	for i := range perfBlocked - 1 {
		fmt.Fprintf(&b, "    - {name: blocked-%d.example.net, action: nxdomain}\n", i)
	}
	return b.String()
}

// perfCases are the configuration classes, each with testdata/dnsperf/cluster.yaml.
func perfCases(t *testing.T) []perfCase {
	views := fixture(t, "dnsperf/views.yaml", nil)
	policy := fixture(t, "dnsperf/dnssec-policy.yaml", nil)
	zone := func(f, extra string) string {
		return fmt.Sprintf("zone %q { type primary; file %q;%s };\n", perfZone, f, extra)
	}
	return []perfCase{
		{name: "plain", objects: perfZoneObject(t, "perf-test", "", ""), zoneKey: "db." + perfZone,
			ref: func(f string) string { return zone(f, "") }},
		{name: "3-views", objects: views + perfZoneObject(t, "perf-a", "va", "") + perfZoneObject(t, "perf-b", "vb", "") + perfZoneObject(t, "perf-c", "vc", ""),
			zoneKey: "db.vc_" + perfZone,
			ref: func(f string) string {
				return fmt.Sprintf("view va { match-clients { 192.0.2.0/24; }; %s};\nview vb { match-clients { 203.0.113.0/24; }; %s};\nview vc { match-clients { any; }; %s};\n",
					zone(f, ""), zone(f, ""), zone(f, ""))
			}},
		{name: "rpz", objects: perfPolicy(t) + perfZoneObject(t, "perf-test", "", ""), zoneKey: "db." + perfZone,
			extra:      map[string]string{"rpz.": "rpz.perf.db"},
			refOptions: `response-policy { zone "rpz.perf"; } recursive-only no;`,
			ref: func(f string) string {
				return `zone "rpz.perf" { type primary; file "rpz.perf.db"; allow-query { localhost; }; allow-transfer { none; }; notify no; };
` + zone(f, "")
			}},
		{name: "signed", objects: policy + perfZoneObject(t, "perf-test", "", "  dnssecPolicyRef: standard\n"), zoneKey: "db." + perfZone, do: true,
			ref: func(f string) string {
				return `dnssec-policy "standard" { keys { csk lifetime unlimited algorithm ecdsap256sha256; }; dnskey-ttl 3600; signatures-validity 14d; signatures-refresh 5d; };
` + zone("perf.test.db", ` dnssec-policy "standard"; inline-signing yes;`)
			}},
	}
}

var (
	dnsperfQPS = regexp.MustCompile(`Queries per second:\s+([0-9.]+)`)
	dnsperfLat = regexp.MustCompile(`Average Latency \(s\):\s+([0-9.]+)`)
	dnsperfLos = regexp.MustCompile(`Queries lost:\s+([0-9]+)`)
)

type perfResult struct {
	qps, latency float64
	lost         int
}

func qpsOf(rs []perfResult) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.qps)
	}
	return out
}

func latOf(rs []perfResult) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.latency)
	}
	return out
}

func lostOf(rs []perfResult) int {
	n := 0
	for _, r := range rs {
		n += r.lost
	}
	return n
}

// roundsOf is each round's two figures, rendered/hand-written, in thousands.
func roundsOf(rend, hand []perfResult) string {
	var out []string
	for i := range rend {
		out = append(out, fmt.Sprintf("%.0f/%.0fk", rend[i].qps/1000, hand[i].qps/1000))
	}
	return strings.Join(out, " ")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func runDnsperf(t *testing.T, bin, server, queries string, do bool, cpus string) perfResult {
	t.Helper()
	args := []string{"-s", server, "-d", queries, "-l", strconv.Itoa(perfSeconds), "-c", "10", "-q", "200"}
	if do {
		args = append(args, "-D")
	}
	var cmd *exec.Cmd
	if cpus != "" {
		cmd = exec.Command("taskset", append([]string{"-c", cpus, bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dnsperf %v: %v\n%s", args, err, out)
	}
	var r perfResult
	m, l, lo := dnsperfQPS.FindSubmatch(out), dnsperfLat.FindSubmatch(out), dnsperfLos.FindSubmatch(out)
	if m == nil || l == nil || lo == nil {
		t.Fatalf("dnsperf printed no figures:\n%s", out)
	}
	r.qps, _ = strconv.ParseFloat(string(m[1]), 64)
	r.latency, _ = strconv.ParseFloat(string(l[1]), 64)
	r.lost, _ = strconv.Atoi(string(lo[1]))
	return r
}

func pin(t *testing.T, pid int, cpus string) {
	t.Helper()
	if out, err := exec.Command("taskset", "-a", "-cp", cpus, strconv.Itoa(pid)).CombinedOutput(); err != nil {
		t.Fatalf("taskset %d: %v\n%s", pid, err, out)
	}
}

// TestDnsperf: see perfCases. Output: one line per case, cores and server.
func TestDnsperf(t *testing.T) {
	if os.Getenv("BINDFN_DNSPERF") == "" {
		t.Skip("a benchmark, not a test: BINDFN_DNSPERF=1 runs it (hack/bench-dnsperf.sh)")
	}
	agentBin := requirements(t)
	dnsperf := mustLook(t, "dnsperf")
	mustLook(t, "taskset")
	if !inLab() {
		enterLab(t)
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	queries := filepath.Join(t.TempDir(), "queries")
	var qb strings.Builder
	rnd := rand.New(rand.NewPCG(21, 21))
	for range 10000 {
		fmt.Fprintf(&qb, "host-%d.%s A\n", rnd.IntN(perfHosts), perfZone)
	}
	if err := os.WriteFile(queries, []byte(qb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var report []string
	for ci, pc := range perfCases(t) {
		t.Run(pc.name, func(t *testing.T) {
			r := renderInputs(t, Inputs(nil).Add(t, fixture(t, "dnsperf/cluster.yaml", nil)+pc.objects), nil)
			rc := r.Clusters["perf"]
			files := map[string]string{} // the reference's file → the rendered zone file
			for _, cm := range rc.ConfigMaps {
				for k, text := range cm.Data {
					if k == pc.zoneKey {
						files["perf.test.db"] = text
					}
					for prefix, f := range pc.extra {
						if strings.HasPrefix(k, prefix) {
							files[f] = text
						}
					}
				}
			}
			if len(files) != 1+len(pc.extra) {
				t.Fatalf("the rendered ConfigMaps hold %d of the zone files %s and %v", len(files), pc.zoneKey, pc.extra)
			}
			prefix := fmt.Sprintf("perf%d-", ci)
			perfPodIP, perfPodSvc, perfRefIP := perfAddrs(ci)
			c := lab.startCluster(r, "perf", podPlan{IP: func(int) string { return perfPodIP }, PrimarySvc: perfPodSvc, NetnsPrefix: prefix})
			defer c.stop()
			c.waitReady(hang)
			dir := filepath.Join(lab.dir, prefix+"ref")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for f, text := range files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			conf := fmt.Sprintf(perfOptions, dir, perfRefIP, pc.refOptions) + pc.ref("perf.test.db")
			if err := os.WriteFile(filepath.Join(dir, "named.conf"), []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
			n := lab.addNetns(prefix+"ref", perfRefIP)
			log := &syncLog{}
			ref := lab.startProc(n, "", []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, []string{"/bin/sh", "-c", "cd " + shellQuote(dir) + " && exec named -g -c named.conf"}, log)
			defer ref.kill(9)
			want := dns.TypeA
			if pc.do {
				want = dns.TypeRRSIG
			}
			for _, s := range []string{perfPodIP, perfRefIP} {
				err := eventually(hang, 100*time.Millisecond, func() error {
					m := new(dns.Msg)
					m.SetQuestion("host-1."+perfZone+".", dns.TypeA)
					m.SetEdns0(1232, true)
					resp, _, err := new(dns.Client).Exchange(m, s+":53")
					if err != nil {
						return err
					}
					for _, rr := range resp.Answer {
						if rr.Header().Rrtype == want {
							return nil
						}
					}
					return fmt.Errorf("%s: no %s in %v", s, dns.TypeToString[want], resp.Answer)
				})
				if err != nil {
					t.Fatalf("%v\nreference log:\n%s", err, log.tail(20))
				}
				if len(pc.extra) > 0 { // the policy applies: host-0 is rewritten
					m := new(dns.Msg)
					m.SetQuestion("host-0."+perfZone+".", dns.TypeA)
					resp, _, err := new(dns.Client).Exchange(m, s+":53")
					if err != nil || resp.Rcode != dns.RcodeNameError {
						t.Fatalf("%s: host-0.%s: want NXDOMAIN (the policy's rule), got %v %v", s, perfZone, resp, err)
					}
				}
			}
			_, namedPID := c.Pods[0].PIDs()
			for _, cores := range []struct{ named, client string }{{"0", "1"}, {"0-1", ""}} {
				pin(t, namedPID, cores.named)
				pin(t, ref.Pid(), cores.named)
				var rend, hand []perfResult
				var ratios []float64
				for round := range perfRounds {
					var r, h perfResult
					if round%2 == 0 {
						r = runDnsperf(t, dnsperf, perfPodIP, queries, pc.do, cores.client)
						h = runDnsperf(t, dnsperf, perfRefIP, queries, pc.do, cores.client)
					} else {
						h = runDnsperf(t, dnsperf, perfRefIP, queries, pc.do, cores.client)
						r = runDnsperf(t, dnsperf, perfPodIP, queries, pc.do, cores.client)
					}
					rend, hand = append(rend, r), append(hand, h)
					ratios = append(ratios, r.qps/h.qps)
				}
				rq, hq := median(qpsOf(rend)), median(qpsOf(hand))
				line := fmt.Sprintf("%-8s %s  named cpus %-3s  rendered %8.0f qps %6.3f ms lost %d | hand-written %8.0f qps %6.3f ms lost %d | ratio median %.3f (rounds %.2f–%.2f) | rounds %s",
					pc.name, lab.release, cores.named, rq, median(latOf(rend))*1000, lostOf(rend), hq, median(latOf(hand))*1000, lostOf(hand),
					median(ratios), slices.Min(ratios), slices.Max(ratios), roundsOf(rend, hand))
				t.Log(line)
				report = append(report, line)
			}
		})
	}
	t.Logf("dnsperf, %d rounds of %d s per server (the order alternating; medians), 10 clients, queries for %d names:\n%s", perfRounds, perfSeconds, perfHosts, strings.Join(report, "\n"))
}
