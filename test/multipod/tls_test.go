package multipod

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

const (
	tlsSvc    = "198.18.41.10"
	tlsName   = "tlslab.dns.svc.cluster.local"
	tlsSecret = "tlslab-tls"
)

func tlsIP(i int) string { return fmt.Sprintf("198.18.40.%d", 10+i) }

// labCA issues the lab's certificates, as cert-manager's CA issuer does:
// every certificate of one CA, which ca.crt holds.
type labCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newLabCA(t *testing.T) *labCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bind-fn lab CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &labCA{cert: c, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue makes a server certificate for the cluster's Service names (the
// names a rendered Certificate asks for), valid from..to, and its key.
func (ca *labCA) issue(t *testing.T, serial int64, from, to time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: tlsName},
		NotBefore: from, NotAfter: to,
		DNSNames:    []string{tlsName, "tlslab-primary.dns.svc.cluster.local", "*.tlslab-headless.dns.svc.cluster.local"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

func (ca *labCA) secret(certPEM, keyPEM []byte) *corev1.Secret {
	return &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{
		layout.TLSCertFile: certPEM, layout.TLSKeyFile: keyPEM, layout.TLSCAFile: ca.pem,
	}}
}

// TestTLSLab runs a three-pod cluster with spec.tls (testdata/tls.yaml)
// under the real agent and BIND, with a certificate of the lab's CA in
// the Secret the pods mount:
//   - clients: BIND 9.20's dig +tls and +https and Knot's kdig +tls, each
//     verifying the certificate against ca.crt and the Service's name,
//     answer on every pod;
//   - XoT: port 53 from the secondaries to pod 0 is rejected from before
//     the pods start, yet they load the zone and a change reaches them:
//     their transfers go to pod 0's port 853 (named's log);
//   - rotation: a new certificate in the Secret is served by every pod
//     while DoT and DoH query loops run, with no failed query and no
//     restart of named;
//   - bad certificates: a key of another certificate, an expired one: the
//     agent says so, the pods turn unready, named keeps serving the last
//     good certificate; a good one makes them ready again.
func TestTLSLab(t *testing.T) {
	agentBin := requirements(t)
	bindtools.RequireRelease(t, bindtools.BIND920)
	mustLook(t, "kdig")
	mustLook(t, "iptables")
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	ca := newLabCA(t)
	now := time.Now()
	cert1, key1 := ca.issue(t, 100, now.Add(-time.Hour), now.Add(12*time.Hour))
	in := Inputs(nil).AddFile(t, "tls.yaml")
	r := renderInputs(t, in, nil)
	r.Clusters["tlslab"].Secrets[tlsSecret] = ca.secret(cert1, key1)

	// Port 53 from the secondaries to pod 0 (its pod IP and the primary
	// Service's address) is rejected before any pod starts.
	plan := podPlan{IP: tlsIP, PrimarySvc: tlsSvc, NetnsPrefix: "tls-", Net: func(name, ip string, extra ...string) *Netns {
		n := lab.addNetns(name, ip, extra...)
		if ip == tlsIP(0) {
			for _, proto := range []string{"tcp", "udp"} {
				for _, src := range []string{tlsIP(1), tlsIP(2)} {
					sh(t, "ip", "netns", "exec", n.Name, "iptables", "-A", "INPUT", "-p", proto, "-s", src, "--dport", "53", "-j", "REJECT")
				}
			}
		}
		return n
	}}
	c := lab.startCluster(r, "tlslab", plan)
	t.Cleanup(c.stop)
	c.waitReady(hang)
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca.pem, 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("clients", func(t *testing.T) {
		for _, p := range c.Pods {
			for _, tc := range []struct {
				tool string
				args []string
			}{
				{"dig", []string{"+tls", "+tls-ca=" + caFile, "+tls-hostname=" + tlsName}},
				{"dig", []string{"+https", "+tls-ca=" + caFile, "+tls-hostname=" + tlsName}},
				{"kdig", []string{"+tls", "+tls-ca=" + caFile, "+tls-hostname=" + tlsName}},
				{"kdig", []string{"+https", "+tls-ca=" + caFile, "+tls-hostname=" + tlsName}},
			} {
				out, err := tlsClient(t, tc.tool, append(tc.args, "@"+p.Net.IP, "www.example.com", "A", "+short")...)
				if err != nil || strings.TrimSpace(out) != "192.0.2.80" {
					t.Errorf("%s: %s %s: %v\n%s", p.Name, tc.tool, strings.Join(tc.args[:1], " "), err, out)
				} else {
					t.Logf("%s: %s %s (certificate verified against ca.crt, name %s): %s", p.Name, tc.tool, tc.args[0], tlsName, strings.TrimSpace(out))
				}
			}
		}
	})

	t.Run("xot", func(t *testing.T) {
		// A change after start: the primary NOTIFYs (UDP to the
		// secondaries' port 53, not blocked); the secondaries can reach
		// pod 0 only on 853.
		in2 := in.Edit(t, "BindZone", "example-com", func(obj map[string]any) {
			spec(obj)["records"] = append(spec(obj)["records"].([]any), map[string]any{"name": "changed", "type": "A", "values": []any{"192.0.2.81"}})
		})
		r2 := renderInputs(t, in2, r)
		r2.Clusters["tlslab"].Secrets[tlsSecret] = r.Clusters["tlslab"].Secrets[tlsSecret]
		c.swap(r2)
		r = r2
		for _, p := range c.Pods {
			if err := eventually(hang, 200*time.Millisecond, func() error {
				return expect(p.Net.IP, "changed.example.com", dns.TypeA, q{}, dns.RcodeSuccess, []string{"192.0.2.81"})
			}); err != nil {
				t.Errorf("%s: the change: %v", p.Name, err)
			}
		}
		for _, p := range c.Secondaries() {
			log := p.Log.String()
			var xfr []string
			for _, l := range strings.Split(log, "\n") {
				if strings.Contains(l, "example.com") && strings.Contains(l, "#853") && (strings.Contains(l, "Transfer completed") || strings.Contains(l, "Transfer status: success")) {
					xfr = append(xfr, l)
				}
			}
			if len(xfr) < 2 {
				t.Errorf("%s: %d completed transfers of example.com from port 853 in named's log, want the first and the change's", p.Name, len(xfr))
			}
			for _, l := range strings.Split(log, "\n") {
				if strings.Contains(l, "example.com") && strings.Contains(l, "#53") && strings.Contains(l, "xfer-in") && strings.Contains(l, "Transfer completed") {
					t.Errorf("%s: a transfer over port 53: %s", p.Name, l)
				}
			}
			for _, l := range xfr {
				t.Logf("%s: %s", p.Name, l)
			}
		}
		// The control: from a secondary, port 53 of pod 0 is closed (the
		// transfers above did not go through it).
		for _, dst := range []string{tlsSvc, tlsIP(0)} {
			if st := digIn(t, c.Pods[1].Net.Name, dst, "www.example.com"); st == "NOERROR" {
				t.Errorf("tlslab-1 → %s port 53 answered: the block does not hold", dst)
			}
		}
		t.Logf("pod 0's INPUT rules (the secondaries' port 53 rejected; the counts are the control queries):\n%s", sh(t, "ip", "netns", "exec", c.Pods[0].Net.Name, "iptables", "-L", "INPUT", "-v", "-n", "-x"))
	})

	t.Run("rotation", func(t *testing.T) {
		before := map[string]int{}
		for _, p := range c.Pods {
			_, before[p.Name] = p.PIDs()
		}
		loop := startTLSLoops(t, c.Pods, ca)
		loop.waitMore(300) // the loops run on the first certificate
		cert2, key2 := ca.issue(t, 200, time.Now().Add(-time.Minute), time.Now().Add(12*time.Hour))
		for _, n := range []int64{200, 300} {
			if n == 300 {
				cert2, key2 = ca.issue(t, 300, time.Now().Add(-time.Minute), time.Now().Add(12*time.Hour))
			}
			r.Clusters["tlslab"].Secrets[tlsSecret] = ca.secret(cert2, key2)
			c.swap(r)
			for _, p := range c.Pods {
				for _, port := range []int{853, 443} {
					if err := eventually(hang, 200*time.Millisecond, func() error { return servesSerial(p.Net.IP, port, ca, n) }); err != nil {
						t.Errorf("%s:%d: %v", p.Name, port, err)
					}
				}
			}
			loop.waitMore(300) // queries on the new certificate
		}
		ok, failed := loop.stop()
		t.Logf("rotated twice during the query loops: %d DoT and DoH queries answered, %d failed", ok, len(failed))
		if len(failed) > 0 {
			t.Errorf("%d queries failed during rotation, first: %v", len(failed), failed[0])
		}
		for _, p := range c.Pods {
			if _, pid := p.PIDs(); pid != before[p.Name] {
				t.Errorf("%s: named restarted (pid %d, was %d)", p.Name, pid, before[p.Name])
			}
		}
	})

	// The DoT/DoH benchmark (BENCHMARKS.md): dnsperf against pod 0 over
	// UDP, TCP, DoT and DoH, same pod, same query file, one after the
	// other. A benchmark, not a test: opt in with BINDFN_TLS_BENCH=1; it
	// asserts only that each mode answered.
	t.Run("bench", func(t *testing.T) {
		if os.Getenv("BINDFN_TLS_BENCH") != "1" {
			t.Skip("BINDFN_TLS_BENCH=1 runs dnsperf over UDP, TCP, DoT and DoH")
		}
		dnsperf := mustLook(t, "dnsperf")
		qf := filepath.Join(t.TempDir(), "queries")
		if err := os.WriteFile(qf, []byte("www.example.com A\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		qpsRe := regexp.MustCompile(`Queries per second:\s+([0-9.]+)`)
		lostRe := regexp.MustCompile(`Queries lost:\s+(\d+)`)
		seconds := "10"
		var udp float64
		for _, mode := range []string{"udp", "tcp", "dot", "doh"} {
			args := []string{"-s", c.Pods[0].Net.IP, "-m", mode, "-d", qf, "-l", seconds, "-c", "20", "-T", "2", "-q", "200"}
			out, err := exec.Command(dnsperf, args...).CombinedOutput()
			m := qpsRe.FindSubmatch(out)
			if err != nil || m == nil {
				t.Errorf("dnsperf %s: %v\n%s", strings.Join(args, " "), err, out)
				continue
			}
			qps, _ := strconv.ParseFloat(string(m[1]), 64)
			if mode == "udp" {
				udp = qps
			}
			lost := ""
			if l := lostRe.FindSubmatch(out); l != nil {
				lost = string(l[1])
			}
			t.Logf("dnsperf %s: %.0f queries/s (%.2f of UDP), lost %s", strings.Join(args, " "), qps, qps/udp, lost)
		}
	})

	t.Run("bad-certificates", func(t *testing.T) {
		good := r.Clusters["tlslab"].Secrets[tlsSecret]
		_, otherKey := ca.issue(t, 400, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
		expired, expiredKey := ca.issue(t, 500, time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour))
		for _, tc := range []struct {
			name, want string
			cert, key  []byte
		}{
			{"mismatched-key", "cannot be used together", good.Data[layout.TLSCertFile], otherKey},
			{"expired", "expired at", expired, expiredKey},
		} {
			r.Clusters["tlslab"].Secrets[tlsSecret] = ca.secret(tc.cert, tc.key)
			c.swap(r)
			for _, p := range c.Pods {
				err := eventually(hang, 200*time.Millisecond, func() error {
					st, err := p.Status()
					if err != nil {
						return err
					}
					if st.LastError == nil || !strings.Contains(st.LastError.Message, tc.want) {
						return fmt.Errorf("lastError %+v, want one with %q", st.LastError, tc.want)
					}
					if code, _, _ := httpGet(p.AgentURL("/readyz")); code == 200 {
						return fmt.Errorf("/readyz is 200")
					}
					return nil
				})
				if err != nil {
					t.Errorf("%s, %s: %v", tc.name, p.Name, err)
					continue
				}
				st, _ := p.Status()
				t.Logf("%s, %s: unready, agent says: %s", tc.name, p.Name, st.LastError.Message)
				// named keeps the last good certificate.
				if err := servesSerial(p.Net.IP, 853, ca, 300); err != nil {
					t.Errorf("%s, %s: %v", tc.name, p.Name, err)
				}
			}
		}
		r.Clusters["tlslab"].Secrets[tlsSecret] = good
		c.swap(r)
		c.waitReady(hang)
	})
}

// tlsClient runs BIND 9.20's dig (its /usr bound over the lab's) or kdig.
func tlsClient(t *testing.T, tool string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang bound
	defer cancel()
	var cmd *exec.Cmd
	if tool == "dig" {
		usr := bindtools.BIND920.Usr(t)
		script := `mount --bind -o ro "$1" /usr && shift && exec /usr/bin/dig "$@"`
		cmd = exec.CommandContext(ctx, "unshare", append([]string{"-m", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh", usr}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, mustLook(t, tool), args...)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// servesSerial: the certificate on ip:port is the CA's with this serial.
func servesSerial(ip string, port int, ca *labCA, serial int64) error {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort(ip, fmt.Sprint(port)), tlsConfig(ca))
	if err != nil {
		return err
	}
	defer conn.Close()
	got := conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	if got != serial {
		return fmt.Errorf("serves certificate serial %d, want %d", got, serial)
	}
	return nil
}

func tlsConfig(ca *labCA) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return &tls.Config{RootCAs: pool, ServerName: tlsName, NextProtos: []string{"h2", "dot"}}
}

// tlsLoops query every pod over DoT and DoH in a loop, a new connection
// (and handshake) per query, counting answers and failures.
type tlsLoops struct {
	stopc  chan struct{}
	wg     sync.WaitGroup
	ok     atomic.Int64
	mu     sync.Mutex
	failed []error
}

func startTLSLoops(t *testing.T, pods []*Pod, ca *labCA) *tlsLoops {
	l := &tlsLoops{stopc: make(chan struct{})}
	cfg := tlsConfig(ca)
	dot := &dns.Client{Net: "tcp-tls", Timeout: 5 * time.Second, TLSConfig: cfg.Clone()}
	dot.TLSConfig.NextProtos = []string{"dot"}
	tr := &http.Transport{TLSClientConfig: cfg.Clone(), ForceAttemptHTTP2: true, DisableKeepAlives: true}
	tr.TLSClientConfig.NextProtos = nil
	doh := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for _, p := range pods {
		for _, kind := range []string{"dot", "doh"} {
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				for {
					select {
					case <-l.stopc:
						return
					default:
					}
					m := new(dns.Msg)
					m.SetQuestion("www.example.com.", dns.TypeA)
					var err error
					if kind == "dot" {
						err = checkAnswer(dot.Exchange(m, net.JoinHostPort(p.Net.IP, "853")))
					} else {
						err = dohQuery(doh, p.Net.IP, m)
					}
					if err != nil {
						l.mu.Lock()
						l.failed = append(l.failed, fmt.Errorf("%s %s: %w", p.Name, kind, err))
						l.mu.Unlock()
					} else {
						l.ok.Add(1)
					}
				}
			}()
		}
	}
	return l
}

func checkAnswer(r *dns.Msg, _ time.Duration, err error) error {
	if err != nil {
		return err
	}
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		return fmt.Errorf("rcode %s, %d answers", dns.RcodeToString[r.Rcode], len(r.Answer))
	}
	return nil
}

func dohQuery(c *http.Client, ip string, m *dns.Msg) error {
	wire, err := m.Pack()
	if err != nil {
		return err
	}
	resp, err := c.Post("https://"+ip+"/dns-query", "application/dns-message", bytes.NewReader(wire))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		return fmt.Errorf("HTTP %d over %s", resp.StatusCode, resp.Proto)
	}
	r := new(dns.Msg)
	if err := r.Unpack(b); err != nil {
		return err
	}
	return checkAnswer(r, 0, nil)
}

// waitMore waits until n more queries were answered.
func (l *tlsLoops) waitMore(n int64) {
	want := l.ok.Load() + n
	_ = eventually(hang, 50*time.Millisecond, func() error {
		if l.ok.Load() < want {
			return fmt.Errorf("waiting")
		}
		return nil
	})
}

func (l *tlsLoops) stop() (int64, []error) {
	close(l.stopc)
	l.wg.Wait()
	return l.ok.Load(), l.failed
}
