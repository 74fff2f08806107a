package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// BenchmarkConverge measures the dynamic-zone agent on real named (issue
// 21): for 1k, 10k and 50k DNSRecords in one dynamic zone, the first
// convergence (every RRset new), the verifying pass after it (one AXFR,
// nothing sent), a steady-state pass (one SOA query), and the pass of a
// restarted agent (no memory: one AXFR); each with its UPDATE messages,
// named's CPU time and the agent's heap. The anchor, in the same run and
// against the same named: nsupdate sending single-record updates.
//
//	go test -run '^$' -bench BenchmarkConverge -benchtime 1x ./internal/agent/
//
// Each sub-benchmark runs its passes once whatever b.N is; the figures are
// reported as metrics (ReportMetric), not as ns/op.
func BenchmarkConverge(b *testing.B) {
	bindtools.RequireBIND(b)
	srv := startBenchNamed(b)
	b.Run("nsupdate-anchor", func(b *testing.B) {
		n := 1000
		var script bytes.Buffer
		fmt.Fprintf(&script, "server 127.0.0.1 %d\nzone anchor.test\n", srv.port)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&script, "update add a%d.anchor.test. 300 IN A 192.0.2.%d\nsend\n", i, i%250+1)
		}
		cpu := srv.cpu(b)
		start := time.Now()
		cmd := bindtools.Current(b).Command(b, "nsupdate", "-y", "hmac-sha256:upd:"+srv.secret)
		cmd.Stdin = &script
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("nsupdate: %v\n%s", err, out)
		}
		d := time.Since(start)
		b.ReportMetric(float64(n)/d.Seconds(), "updates/s")
		b.ReportMetric(srv.cpu(b)-cpu, "named-cpu-s")
	})
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			zone := fmt.Sprintf("dyn%d.test", n)
			var records []string
			for i := 0; i < n; i++ {
				records = append(records, fmt.Sprintf("r%d 300 IN A 10.%d.%d.%d", i, i>>16, (i>>8)&255, i&255))
			}
			z := layout.DynamicZone{Zone: zone, KeyName: "upd", KeyFile: srv.keyFile, Records: records}
			c := &Converger{Addr: srv.addr, StateFile: filepath.Join(b.TempDir(), "state.json"), Timeout: 30 * time.Second}
			pass := func(name string, c *Converger, wantUpdated int) {
				cpu := srv.cpu(b)
				heap := sampleHeap()
				start := time.Now()
				res, err := c.Converge(context.Background(), []layout.DynamicZone{z})
				d := time.Since(start)
				peak, alloc := heap()
				if err != nil {
					b.Fatalf("%s pass: %v", name, err)
				}
				if res.Updated != wantUpdated {
					b.Fatalf("%s pass updated %d RRsets, want %d", name, res.Updated, wantUpdated)
				}
				b.ReportMetric(d.Seconds(), name+"-s")
				b.ReportMetric(float64(res.Messages), name+"-updates")
				b.ReportMetric(float64(res.Transfers), name+"-axfrs")
				b.ReportMetric(srv.cpu(b)-cpu, name+"-named-cpu-s")
				b.ReportMetric(float64(peak)/(1<<20), name+"-heap-MiB")
				b.ReportMetric(float64(alloc)/(1<<20), name+"-alloc-MiB")
			}
			pass("first", c, n)
			pass("verify", c, 0)
			pass("steady", c, 0)
			restarted := &Converger{Addr: c.Addr, StateFile: c.StateFile, Timeout: c.Timeout}
			pass("restart", restarted, 0)
			// Every record is served.
			r, err := query(srv.addr, fmt.Sprintf("r%d.%s", n-1, zone), dns.TypeA)
			if err != nil || len(r.Answer) != 1 {
				b.Fatalf("last record not served: %v %v", r, err)
			}
		})
	}
}

// sampleHeap samples the heap in use every 5 ms until the returned
// function is called; it returns the peak and the bytes allocated since.
func sampleHeap() func() (peak, alloc uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base, total := m.HeapInuse, m.TotalAlloc
	peak := base
	var mu sync.Mutex
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				mu.Lock()
				peak = max(peak, m.HeapInuse)
				mu.Unlock()
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		<-stopped
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return max(peak, m.HeapInuse), m.TotalAlloc - total
	}
}

type benchNamed struct {
	addr, secret, keyFile string
	port                  int
	pid                   int
}

// cpu is named's user+system CPU time so far, in seconds.
func (s *benchNamed) cpu(b *testing.B) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// startBenchNamed runs named -g on loopback with one key and the zones of
// the benchmark, each holding only its SOA and NS.
func startBenchNamed(b *testing.B) *benchNamed {
	dir := b.TempDir()
	s := &benchNamed{port: bindtools.FreePort(b), secret: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}
	s.addr = fmt.Sprintf("127.0.0.1:%d", s.port)
	s.keyFile = filepath.Join(dir, "upd.conf")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("upd.conf", fmt.Sprintf("key \"upd\" { algorithm hmac-sha256; secret %q; };\n", s.secret))
	conf := fmt.Sprintf(`options {
	directory %q;
	pid-file none;
	listen-on port %d { 127.0.0.1; };
	listen-on-v6 { none; };
	recursion no;
	notify no;
};
include %q;
`, dir, s.port, s.keyFile)
	for _, z := range []string{"anchor.test", "dyn1000.test", "dyn10000.test", "dyn50000.test"} {
		write(z+".zone", "$TTL 300\n@ IN SOA ns hostmaster 1 300 60 1209600 60\n@ IN NS ns\nns IN A 192.0.2.53\n")
		conf += fmt.Sprintf("zone %q { type primary; file %q; allow-update { key \"upd\"; }; allow-transfer { key \"upd\"; }; };\n", z, filepath.Join(dir, z+".zone"))
	}
	write("named.conf", conf)
	var logs bytes.Buffer
	// The release under test (BINDFN_BIND, 9.20 unless set); its PID is
	// named's (every wrapper execs).
	cmd := bindtools.Current(b).Command(b, "named", "-g", "-c", filepath.Join(dir, "named.conf"))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s.pid = cmd.Process.Pid
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r, err := query(s.addr, "dyn50000.test", dns.TypeSOA); err == nil && r.Rcode == dns.RcodeSuccess {
			return s
		}
		if time.Now().After(deadline) {
			b.Fatalf("named did not start:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
