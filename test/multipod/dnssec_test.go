package multipod

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// The signed cluster (docs/design.md#dnssec): a primary and two secondaries serving two
// signed zones, one with a KSK and a ZSK (ECDSA P-256), one with a CSK
// (Ed25519). Its keys are the render's, shipped in <cluster>-dnssec.
const (
	sigCluster = "sig"
	sigSvc     = "198.18.1.40"
)

func sigIP(i int) string { return fmt.Sprintf("198.18.8.%d", 10+i) }

var sigZones = []string{"signed.example", "csk.example"}

func sigInputs(t testing.TB) Inputs {
	t.Helper()
	return fixtureInputs(t, "dnssec.yaml")
}

// TestDNSSEC: named signs with the rendered keys (the
// DNSKEY set it serves is the Secret's), delv validates every pod's answers
// with the rendered DS as its only trust anchor; then the primary's data
// volume is deleted and the primary restarted: the DNSKEY set is unchanged
// and delv still validates, on the primary and on every secondary. Then
// keys imported from outside (scenarioImportedKeys).
func TestDNSSEC(t *testing.T) {
	agentBin := requirements(t)
	delv := mustLook(t, "delv")
	if !inLab() {
		enterLab(t)
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	r := renderInputs(t, sigInputs(t), nil)
	rc := r.Clusters[sigCluster]
	start := time.Now()
	c := lab.startCluster(r, sigCluster, podPlan{IP: sigIP, PrimarySvc: sigSvc})
	c.waitReady(hang)
	t.Logf("%s: %d pods ready in %v", sigCluster, len(c.Pods), time.Since(start).Round(time.Millisecond))

	// The Secret's keys, by zone: what named must serve.
	secret := rc.Secrets[layout.DNSSECSecretName(sigCluster)]
	if secret == nil {
		t.Fatalf("no Secret %s rendered", layout.DNSSECSecretName(sigCluster))
	}
	keys, probs := dnssec.Parse(secret.Data)
	if len(probs) != 0 {
		t.Fatalf("rendered keys: %v", probs)
	}
	want := map[string][]string{}
	for _, k := range keys {
		want[strings.TrimSuffix(k.Zone(), ".")] = append(want[strings.TrimSuffix(k.Zone(), ".")], keyID(k.DNSKEY))
	}
	for z := range want {
		sort.Strings(want[z])
	}
	ds := rc.ConfigMaps[layout.DSConfigMapName(sigCluster)]
	if ds == nil {
		t.Fatalf("no ConfigMap %s rendered", layout.DSConfigMapName(sigCluster))
	}
	anchors := filepath.Join(t.TempDir(), layout.TrustAnchorsFile)
	testutil.WriteFile(t, anchors, []byte(ds.Data[layout.TrustAnchorsFile]))
	t.Logf("DS records from the render (%s):\n%s", layout.DSFile, ds.Data[layout.DSFile])

	check := func(t *testing.T, when string) {
		t.Helper()
		for _, p := range c.Pods {
			for _, z := range sigZones {
				err := eventually(hang, 200*time.Millisecond, func() error {
					got := dnskeys(p.Net.IP, z)
					if diff := cmp.Diff(want[z], got); diff != "" {
						return fmt.Errorf("%s: %s serves other DNSKEYs than the Secret's (-secret +served):\n%s", when, p.Name, diff)
					}
					return delvValidates(delv, anchors, p.Net.IP, z)
				})
				if err != nil {
					t.Error(err)
				}
			}
		}
	}
	t.Run("validates", func(t *testing.T) { check(t, "at start") })
	t.Run("wrong anchor fails", func(t *testing.T) {
		// The control: a DS that is not the zone's must not validate, or
		// "fully validated" above would prove nothing.
		wrong := filepath.Join(t.TempDir(), "wrong.conf")
		text := ds.Data[layout.TrustAnchorsFile]
		bad := digestRe.ReplaceAllStringFunc(text, func(m string) string { return m[:len(m)-1] + flip(m[len(m)-1]) })
		if bad == text {
			t.Fatalf("no digest found in %s", text)
		}
		testutil.WriteFile(t, wrong, []byte(bad))
		for _, z := range sigZones {
			if err := delvValidates(delv, wrong, c.Pods[0].Net.IP, z); err == nil {
				t.Errorf("delv validated %s with a wrong DS as trust anchor", z)
			}
		}
	})

	t.Run("primary volume lost", func(t *testing.T) {
		p0 := c.Pods[0]
		// Content changes first, so the signed serials have moved on from
		// what a fresh start makes of the rendered zones.
		for i := range 3 {
			in := sigInputs(t)
			for _, z := range []string{"signed-example", "csk-example"} {
				in = in.Edit(t, "BindZone", z, func(obj map[string]any) {
					recs := spec(obj)["records"].([]any)
					for j := 0; j <= i; j++ {
						recs = append(recs, map[string]any{"name": fmt.Sprintf("new%d", j), "type": "TXT", "values": []any{`"change"`}})
					}
					spec(obj)["records"] = recs
				})
			}
			r = renderInputs(t, in, r)
			c.swap(r)
			for _, z := range sigZones {
				name := fmt.Sprintf("new%d.%s", i, z)
				if err := eventually(hang, 100*time.Millisecond, func() error {
					for _, p := range c.Pods {
						if err := expect(p.Net.IP, name, dns.TypeTXT, q{tcp: true}, dns.RcodeSuccess, []string{`"change"`}); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					t.Fatalf("content change %d: %v", i, err)
				}
			}
		}
		keyDir := filepath.Join(p0.Root, layout.DataDir, layout.DNSSECKeySubdir)
		before, _ := filepath.Glob(filepath.Join(keyDir, "K*"))
		serialBefore := map[string]uint32{}
		for _, z := range sigZones {
			serialBefore[z] = servedSerial(p0.Net.IP, z)
		}
		p0.stop()
		// While the primary is down the secondaries take the reads: their
		// copies validate with the same DS.
		for _, p := range c.Secondaries() {
			for _, z := range sigZones {
				if err := delvValidates(delv, anchors, p.Net.IP, z); err != nil {
					t.Errorf("primary down: %v", err)
				}
			}
		}
		data := filepath.Join(p0.Root, layout.DataDir)
		if err := os.RemoveAll(data); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(data, 0o755); err != nil { // a new, empty PVC
			t.Fatal(err)
		}
		p0.start()
		p0.waitReady(hang)
		after, _ := filepath.Glob(filepath.Join(keyDir, "K*"))
		if len(before) != len(after) || len(after) != 3*len(keys) {
			t.Errorf("key-directory held %d files before the loss and %d after; want the Secret's %d (no key of named's own)", len(before), len(after), 3*len(keys))
		}
		if !strings.Contains(p0.Log.String(), "installed DNSSEC key") {
			t.Errorf("the agent did not log installing the keys after the volume loss")
		}
		check(t, "after the primary lost its volume")
		// The re-signed zone's serial (serial-update-method unixtime) is not
		// below the one the secondaries hold: they follow the primary again.
		for _, z := range sigZones {
			err := eventually(hang, 200*time.Millisecond, func() error {
				want := servedSerial(p0.Net.IP, z)
				if int32(want-serialBefore[z]) < 0 { // RFC 1982
					return fmt.Errorf("%s: the primary re-signed with serial %d, below %d before the loss: the secondaries would never transfer again", z, want, serialBefore[z])
				}
				for _, p := range c.Secondaries() {
					if got := servedSerial(p.Net.IP, z); got != want {
						return fmt.Errorf("%s: %s has serial %d, the primary %d", z, p.Name, got, want)
					}
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			t.Logf("%s: signed serial %d before the primary's volume loss, %d after, on every pod", z, serialBefore[z], servedSerial(p0.Net.IP, z))
		}
	})
	c.stop()
	t.Run("imported keys", func(t *testing.T) { scenarioImportedKeys(t, lab, delv) })
}

// keyID names a DNSKEY by algorithm, flags and tag.
func keyID(k *dns.DNSKEY) string {
	return fmt.Sprintf("%d/%d/%d", k.Algorithm, k.Flags, k.KeyTag())
}

// dnskeys is the DNSKEY RRset a server answers for zone.
func dnskeys(server, zone string) []string {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(zone), dns.TypeDNSKEY)
	m.SetEdns0(4096, true)
	m.RecursionDesired = false
	c := &dns.Client{Net: "tcp", Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, server+":53")
	if err != nil || r.Rcode != dns.RcodeSuccess {
		return nil
	}
	var out []string
	for _, rr := range r.Answer {
		if k, ok := rr.(*dns.DNSKEY); ok {
			out = append(out, keyID(k))
		}
	}
	sort.Strings(out)
	return out
}

// delvValidates runs delv against server with the rendered trust anchors
// (the zone's DS, static-ds) as its only anchor, and wants "fully validated".
func delvValidates(delv, anchors, server, zone string) error {
	out, err := exec.Command(delv, "@"+server, "-a", anchors, "+root="+zone, "+tcp", "www."+zone, "A").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "; fully validated") {
		return fmt.Errorf("delv @%s www.%s A (trust anchor: the rendered DS): not validated (%v):\n%s", server, zone, err, out)
	}
	return nil
}

var digestRe = regexp.MustCompile(`static-ds \d+ \d+ 2 "[0-9A-F]`)

func flip(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}

// scenarioImportedKeys: keys a user made with dnssec-keygen, in a Secret
// managed outside bind-fn (spec.dnssec.importExisting; the test places it as
// External Secrets would), their public halves in spec.dnssec.publicKeys:
// named signs with exactly them and delv validates against the DS the
// render printed from the public keys.
func scenarioImportedKeys(t *testing.T, lab *Lab, delv string) {
	keygen := mustLook(t, "dnssec-keygen")
	const zone = "imported.example"
	dir := t.TempDir()
	for _, args := range [][]string{{"-f", "KSK"}, {}} {
		out, err := exec.Command(keygen, append(append([]string{"-q", "-K", dir, "-a", "ECDSAP256SHA256"}, args...), zone)...).CombinedOutput()
		if err != nil {
			t.Fatalf("dnssec-keygen: %v\n%s", err, out)
		}
	}
	files := map[string][]byte{}
	var pub []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[strings.ReplaceAll(e.Name(), "+", "_")] = b // a Secret key has no "+"
		if strings.HasSuffix(e.Name(), ".key") {
			for _, l := range strings.Split(string(b), "\n") {
				if l != "" && !strings.HasPrefix(l, ";") {
					pub = append(pub, fmt.Sprintf("%q", l))
				}
			}
		}
	}
	in := Inputs(nil).AddFixture(t, "dnssec-imported.yaml", map[string]string{"PUBLIC_KEYS": strings.Join(pub, ", "), "ZONE": zone})
	r := renderInputs(t, in, nil)
	rc := r.Clusters["imp"]
	if rc.Secrets[layout.DNSSECSecretName("imp")] != nil {
		t.Fatalf("the render wrote the imported Secret %s", layout.DNSSECSecretName("imp"))
	}
	// The Secret as External Secrets would create it.
	rc.Secrets[layout.DNSSECSecretName("imp")] = &corev1.Secret{Data: files}
	c := lab.startCluster(r, "imp", podPlan{IP: func(i int) string { return fmt.Sprintf("198.18.9.%d", 10+i) }, PrimarySvc: "198.18.1.41"})
	c.waitReady(hang)

	keys, probs := dnssec.Parse(files)
	if len(probs) != 0 || len(keys) != 2 {
		t.Fatalf("dnssec-keygen keys: %d, %v", len(keys), probs)
	}
	var want []string
	for _, k := range keys {
		want = append(want, keyID(k.DNSKEY))
	}
	sort.Strings(want)
	anchors := filepath.Join(t.TempDir(), layout.TrustAnchorsFile)
	testutil.WriteFile(t, anchors, []byte(rc.ConfigMaps[layout.DSConfigMapName("imp")].Data[layout.TrustAnchorsFile]))
	for _, p := range c.Pods {
		err := eventually(hang, 200*time.Millisecond, func() error {
			if diff := cmp.Diff(want, dnskeys(p.Net.IP, zone)); diff != "" {
				return fmt.Errorf("%s serves other DNSKEYs than the imported ones (-imported +served):\n%s", p.Name, diff)
			}
			return delvValidates(delv, anchors, p.Net.IP, zone)
		})
		if err != nil {
			t.Error(err)
		}
	}
}

// servedSerial is the zone's serial on server, 0 when it cannot be read.
func servedSerial(server, zone string) uint32 {
	s, err := zoneSerial(server, zone)
	if err != nil {
		return 0
	}
	return s
}
