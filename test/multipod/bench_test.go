package multipod

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// propagation is one series of update → visible-on-every-secondary times.
type propagation struct {
	label string
	secs  int
	times []time.Duration
}

func (p propagation) pct(f float64) time.Duration {
	s := append([]time.Duration(nil), p.times...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	i := int(f*float64(len(s)-1) + 0.5)
	return s[i]
}

func (p propagation) String() string {
	return fmt.Sprintf("%-38s secondaries=%d n=%d median=%v p95=%v max=%v", p.label, p.secs, len(p.times),
		p.pct(0.5).Round(10*time.Microsecond), p.pct(0.95).Round(10*time.Microsecond), p.pct(1).Round(10*time.Microsecond))
}

// measure sends n TSIG-signed updates (each adds one A record) to primary and
// times each until every secondary answers it. An update not visible
// everywhere within bound fails the test (the functional assertion).
func measure(t *testing.T, label, primary string, secondaries []string, zone string, key TSIG, n int, bound time.Duration) propagation {
	t.Helper()
	var pl tcpPoller
	defer pl.close()
	res := propagation{label: label, secs: len(secondaries)}
	tag := fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)
	for i := range n {
		name := fmt.Sprintf("u%d-%s.%s.", i, tag, zone)
		ip := fmt.Sprintf("198.51.100.%d", 1+i%250)
		// Warm the connections so the first probe costs no handshake.
		for _, s := range secondaries {
			pl.has(s, name, dns.TypeA, ip)
		}
		t0 := time.Now()
		err := update(primary, zone, key, func(m *dns.Msg) { m.Insert([]dns.RR{mustRR(name + " 60 IN A " + ip)}) })
		if err != nil {
			t.Fatalf("%s: update %d: %v", label, i, err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var late []string
		for _, s := range secondaries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !pl.has(s, name, dns.TypeA, ip) {
					if time.Since(t0) > bound {
						mu.Lock()
						late = append(late, s)
						mu.Unlock()
						return
					}
					time.Sleep(500 * time.Microsecond)
				}
			}()
		}
		wg.Wait()
		if len(late) > 0 {
			t.Fatalf("%s: update %d (%s) not visible on %v within %v", label, i, name, late, bound)
		}
		res.times = append(res.times, time.Since(t0))
	}
	return res
}

// refPair is the hand-tuned reference: a hand-written primary and n
// secondaries (plain named, no agent, no views), rates tuned as
// docs/design.md#replication says, one dynamic zone, keyed NOTIFY and transfers.
type refPair struct {
	primary     string
	secondaries []string
	key         TSIG
}

const refZone = "bench.test"

func startReference(t *testing.T, lab *Lab, nsec int, base int) refPair {
	t.Helper()
	secret := func() string {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return base64.StdEncoding.EncodeToString(b)
	}
	xfr, upd := secret(), secret()
	ip := func(i int) string { return fmt.Sprintf("198.18.4.%d", base+i) }
	keys := fmt.Sprintf("key \"ref-xfr\" { algorithm hmac-sha256; secret %q; };\nkey \"ref-upd\" { algorithm hmac-sha256; secret %q; };\n", xfr, upd)
	opts := func(dir, addr string) string {
		return fmt.Sprintf(`options {
	directory %q; pid-file "named.pid"; session-keyfile "session.key";
	listen-on { %s; }; listen-on-v6 { none; }; recursion no; allow-transfer { none; };
	notify-rate 1000; startup-notify-rate 1000; serial-query-rate 1000; notify-delay 0;
};
`, dir, addr)
	}
	var also []string
	var ref refPair
	ref.primary = ip(0)
	ref.key = TSIG{Name: "ref-upd", Secret: upd}
	for i := 1; i <= nsec; i++ {
		also = append(also, fmt.Sprintf("%s key \"ref-xfr\";", ip(i)))
		ref.secondaries = append(ref.secondaries, ip(i))
	}
	for i := 0; i <= nsec; i++ {
		name := fmt.Sprintf("ref%d-%d", base, i)
		dir := filepath.Join(lab.dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		conf := keys + opts(dir, ip(i))
		if i == 0 {
			zone := "$TTL 60\n@ IN SOA ns1.bench.test. hostmaster.bench.test. 1 300 60 1209600 60\n@ IN NS ns1.bench.test.\nns1 IN A 198.51.100.53\n"
			if err := os.WriteFile(filepath.Join(dir, "bench.test.zone"), []byte(zone), 0o644); err != nil {
				t.Fatal(err)
			}
			conf += fmt.Sprintf("zone %q { type primary; file \"bench.test.zone\"; allow-update { key \"ref-upd\"; }; allow-transfer { key \"ref-xfr\"; }; notify explicit; also-notify { %s }; };\n", refZone, strings.Join(also, " "))
		} else {
			conf += fmt.Sprintf("zone %q { type secondary; file \"bench.test.zone\"; primaries { %s key \"ref-xfr\"; }; allow-notify { key \"ref-xfr\"; }; };\n", refZone, ip(0))
		}
		if err := os.WriteFile(filepath.Join(dir, "named.conf"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		n := lab.addNetns(name, ip(i))
		log := &syncLog{}
		named := mustLook(t, "named")
		p := lab.startProc(n, "", []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, []string{"/bin/sh", "-c", "exec " + named + " -g -c " + filepath.Join(dir, "named.conf")}, log)
		_ = p
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("--- log of %s ---\n%s", name, log.tail(30))
			}
		})
	}
	// Wait for every secondary to load the zone.
	for _, s := range ref.secondaries {
		err := eventually(hang, 50*time.Millisecond, func() error {
			return expect(s, "ns1.bench.test", dns.TypeA, q{tcp: true}, dns.RcodeSuccess, []string{"198.51.100.53"})
		})
		if err != nil {
			t.Fatalf("reference secondary %s: %v", s, err)
		}
	}
	return ref
}
