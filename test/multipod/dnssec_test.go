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

	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// The signed cluster (issue #14): a primary and two secondaries serving two
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
	items, err := testutil.DecodeItems("signed.yaml", []byte(`
apiVersion: bind.unkin.net/v1alpha1
kind: BindCluster
metadata: {name: sig, namespace: dns}
spec:
  replicas: 3
  storage: {size: 1Gi}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindDNSSECPolicy
metadata: {name: kskzsk, namespace: dns}
spec:
  clusterRef: sig
  keys:
    - {role: ksk, algorithm: ecdsap256sha256, lifetime: unlimited}
    - {role: zsk, algorithm: ecdsap256sha256, lifetime: unlimited}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindDNSSECPolicy
metadata: {name: csk, namespace: dns}
spec:
  clusterRef: sig
  keys:
    - {role: csk, algorithm: ed25519, lifetime: unlimited}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: signed-example, namespace: dns}
spec:
  clusterRef: sig
  zoneName: signed.example
  nameservers: [ns1.signed.example.]
  dnssecPolicyRef: kskzsk
  records:
    - {name: ns1, type: A, values: ["198.18.8.10"]}
    - {name: www, type: A, values: ["192.0.2.80"]}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: csk-example, namespace: dns}
spec:
  clusterRef: sig
  zoneName: csk.example
  nameservers: [ns1.csk.example.]
  dnssecPolicyRef: csk
  records:
    - {name: ns1, type: A, values: ["198.18.8.10"]}
    - {name: www, type: A, values: ["192.0.2.81"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	return Inputs(items)
}

// TestDNSSECKeysSurviveVolumeLoss: named signs with the rendered keys (the
// DNSKEY set it serves is the Secret's), delv validates every pod's answers
// with the rendered DS as its only trust anchor; then the primary's data
// volume is deleted and the primary restarted: the DNSKEY set is unchanged
// and delv still validates, on the primary and on every secondary.
func TestDNSSECKeysSurviveVolumeLoss(t *testing.T) {
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
	c.waitReady(60 * time.Second)
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
				err := eventually(30*time.Second, 200*time.Millisecond, func() error {
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
		keyDir := filepath.Join(p0.Root, layout.DataDir, layout.DNSSECKeySubdir)
		before, _ := filepath.Glob(filepath.Join(keyDir, "K*"))
		p0.stop()
		data := filepath.Join(p0.Root, layout.DataDir)
		if err := os.RemoveAll(data); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(data, 0o755); err != nil { // a new, empty PVC
			t.Fatal(err)
		}
		p0.start()
		p0.waitReady(60 * time.Second)
		after, _ := filepath.Glob(filepath.Join(keyDir, "K*"))
		if len(before) != len(after) || len(after) != 3*len(keys) {
			t.Errorf("key-directory held %d files before the loss and %d after; want the Secret's %d (no key of named's own)", len(before), len(after), 3*len(keys))
		}
		if !strings.Contains(p0.Log.String(), "installed DNSSEC key") {
			t.Errorf("the agent did not log installing the keys after the volume loss")
		}
		check(t, "after the primary lost its volume")
	})
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
