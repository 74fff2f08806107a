package multipod

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

const extSvc = "198.18.31.10"

func extIP(i int) string { return fmt.Sprintf("198.18.30.%d", 10+i) }

// TestExternalSecrets runs examples/authoritative (three pods, two views,
// a signed zone) rendered with spec.secrets external: the render holds no
// Secret, and the test makes every Secret the render's info results name,
// as External Secrets or SOPS would, with fresh material (crypto/rand) in
// the documented formats (one with secret alone, the others with
// algorithm and keyName too); the DNSSEC Secret holds keys made apart, whose
// public halves are in spec.dnssec.publicKeys. Every pod then serves every
// zone of both views (the secondaries transferred them with the external
// transfer keys), the signed zone with exactly the imported DNSKEYs, and an
// UPDATE signed with the external update key reaches every secondary.
// Rotating that Secret's material is taken without a restart: the new key
// signs, the old one is refused. The rndc key is in no Secret either: the
// agent's readiness checks and its rndc reconfig run through the key it
// made.
func TestExternalSecrets(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))

	// The signing keys, made apart from the external render: here by a
	// rendered-mode render, as a key ceremony would with dnssec-keygen.
	made := renderInputs(t, authInputs(t), nil).Clusters["auth"].Secrets[layout.DNSSECSecretName("auth")]
	if made == nil {
		t.Fatal("the rendered mode made no DNSSEC Secret for the signed zone")
	}
	var pub []any
	for name, b := range made.Data {
		if strings.HasSuffix(name, dnssec.SuffixKey) {
			for _, l := range strings.Split(string(b), "\n") {
				if l != "" && !strings.HasPrefix(l, ";") {
					pub = append(pub, l)
				}
			}
		}
	}
	in := authInputs(t).Edit(t, "BindCluster", "auth", func(obj map[string]any) {
		spec(obj)["secrets"] = "external"
		spec(obj)["dnssec"] = map[string]any{"publicKeys": pub}
	})
	r := renderInputs(t, in, nil)
	rc := r.Clusters["auth"]
	for name := range rc.Secrets {
		t.Errorf("spec.secrets external: the render wrote Secret %s", name)
	}
	if t.Failed() {
		t.FailNow()
	}

	// The Secrets, made elsewhere: the ones the pods mount.
	keyNames := map[string]string{}
	for _, k := range testutil.AgentConfig(t, rc).ImportedKeys {
		keyNames[k.Secret] = k.KeyName
	}
	if len(keyNames) < 3 {
		t.Fatalf("agent.json imports %d keys, want the transfer keys of both views and the update key: %v", len(keyNames), keyNames)
	}
	for i, secret := range slices.Sorted(maps.Keys(keyNames)) {
		keyName := keyNames[secret]
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		data := map[string][]byte{objects.SecretKeySecret: []byte(base64.StdEncoding.EncodeToString(b) + "\n")}
		if i > 0 { // the first (auth-internal-xfr-tsig) with the material alone, the others in the rendered format
			data[objects.SecretKeyAlgorithm] = []byte("hmac-sha256")
			data[objects.SecretKeyKeyName] = []byte(keyName)
		}
		rc.Secrets[secret] = &corev1.Secret{Data: data}
	}
	rc.Secrets[layout.DNSSECSecretName("auth")] = &corev1.Secret{Data: made.Data}

	c := lab.startCluster(r, "auth", podPlan{IP: extIP, PrimarySvc: extSvc, NetnsPrefix: "ext-"})
	t.Cleanup(c.stop)
	c.waitReady(hang)

	t.Run("serves", func(t *testing.T) { scenarioStart(t, c) })
	t.Run("signed-zone", func(t *testing.T) {
		keys, probs := dnssec.Parse(made.Data)
		if len(probs) != 0 || len(keys) == 0 {
			t.Fatalf("the made keys: %d, %v", len(keys), probs)
		}
		var want []string
		for _, k := range keys {
			want = append(want, keyID(k.DNSKEY))
		}
		sort.Strings(want)
		for _, p := range c.Pods {
			err := eventually(hang, 200*time.Millisecond, func() error {
				if got := dnskeys(p.Net.IP, "secure.example.com"); strings.Join(got, " ") != strings.Join(want, " ") {
					return fmt.Errorf("DNSKEYs %v, want the imported %v", got, want)
				}
				return nil
			})
			if err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
		}
	})
	t.Run("update", func(t *testing.T) {
		key := TSIG{Name: keyNames["externaldns-key-tsig"], Secret: c.secretValue(t, "externaldns-key-tsig", objects.SecretKeySecret)}
		const name = "external-secrets.apps.example.com."
		if err := update(c.PrimarySvc, "apps.example.com", key, func(m *dns.Msg) {
			m.Insert([]dns.RR{mustRR(name + " 60 IN A 192.0.2.77")})
		}); err != nil {
			t.Fatalf("UPDATE signed with the external key %q: %v", key.Name, err)
		}
		for _, p := range c.Pods {
			if err := eventually(hang, 100*time.Millisecond, func() error {
				return expect(p.Net.IP, name, dns.TypeA, q{}, dns.RcodeSuccess, []string{"192.0.2.77"})
			}); err != nil {
				t.Errorf("%s: the update: %v", p.Name, err)
			}
		}
	})
	// Rotation as the secret store does it: new material in the same
	// Secret. The agent takes it with rndc reconfig, through the rndc key it
	// made itself (no Secret holds one); the old key is refused after.
	t.Run("rotate", func(t *testing.T) {
		old := TSIG{Name: keyNames["externaldns-key-tsig"], Secret: c.secretValue(t, "externaldns-key-tsig", objects.SecretKeySecret)}
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		fresh := TSIG{Name: old.Name, Secret: base64.StdEncoding.EncodeToString(b)}
		rc.Secrets["externaldns-key-tsig"] = &corev1.Secret{Data: map[string][]byte{objects.SecretKeySecret: []byte(fresh.Secret)}}
		c.swap(r)
		const name = "rotated.apps.example.com."
		if err := eventually(hang, 200*time.Millisecond, func() error {
			return update(c.PrimarySvc, "apps.example.com", fresh, func(m *dns.Msg) {
				m.Insert([]dns.RR{mustRR(name + " 60 IN A 192.0.2.78")})
			})
		}); err != nil {
			t.Fatalf("UPDATE signed with the rotated key: %v", err)
		}
		if err := update(c.PrimarySvc, "apps.example.com", old, func(m *dns.Msg) {
			m.Insert([]dns.RR{mustRR("old-key.apps.example.com. 60 IN A 192.0.2.79")})
		}); err == nil {
			t.Errorf("an UPDATE signed with the key before rotation is still accepted")
		}
		for _, p := range c.Pods {
			if err := eventually(hang, 100*time.Millisecond, func() error {
				return expect(p.Net.IP, name, dns.TypeA, q{}, dns.RcodeSuccess, []string{"192.0.2.78"})
			}); err != nil {
				t.Errorf("%s: the update with the rotated key: %v", p.Name, err)
			}
			if strings.Contains(p.Log.String(), fresh.Secret) || strings.Contains(p.Log.String(), old.Secret) {
				t.Errorf("%s: its log holds key material", p.Name)
			}
		}
	})
	t.Run("no-refused-notify", func(t *testing.T) { checkNoRefusedNotify(t, c.Pods) })
}
