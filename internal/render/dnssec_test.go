package render_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// noRand fails every read: a render that needs no new key must not read it.
type noRand struct{}

func (noRand) Read([]byte) (int, error) { return 0, errors.New("no new key material expected") }

func signedInput(t *testing.T, policyKeys string, zones ...string) []model.Item {
	t.Helper()
	var b strings.Builder
	b.WriteString(`apiVersion: bind.unkin.net/v1alpha1
kind: BindCluster
metadata: {name: sec, namespace: dns}
spec: {}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindDNSSECPolicy
metadata: {name: pol, namespace: dns}
spec:
  keys: ` + policyKeys + "\n")
	for i, z := range zones {
		fmt.Fprintf(&b, `---
apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: z%d, namespace: dns}
spec:
  clusterRef: sec
  zoneName: %s
  nameservers: [ns1.%s.]
  dnssecPolicyRef: pol
  records:
    - {name: ns1, type: A, values: ["192.0.2.53"]}
`, i, z, z)
	}
	items, err := testutil.DecodeItems("zones.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return items
}

const kskZsk = `[{role: ksk, algorithm: ecdsap256sha256}, {role: zsk, algorithm: ecdsap256sha256}]`

func runRand(items []model.Item, prev []prior.Object, r interface{ Read([]byte) (int, error) }) ([]render.Object, diag.Results) {
	return pipeline.Run(pipeline.Input{Items: items, Previous: prev}, render.Options{Rand: r})
}

func mustRun(t *testing.T, items []model.Item, prev []prior.Object, r interface{ Read([]byte) (int, error) }) ([]render.Object, diag.Results) {
	t.Helper()
	objs, rs := runRand(items, prev, r)
	if rs.HasErrors() {
		t.Fatalf("render failed: %v", rs)
	}
	return objs, rs
}

// keyFiles is the DNSSEC Secret's data, by key.
func keyFiles(objs []render.Object) map[string]string {
	for _, o := range objs {
		if s, ok := o.Obj.(*corev1.Secret); ok && s.Name == layout.DNSSECSecretName("sec") {
			out := map[string]string{}
			for k, v := range s.Data {
				out[k] = string(v)
			}
			return out
		}
	}
	return nil
}

func dsText(objs []render.Object) string {
	for _, o := range objs {
		if cm, ok := o.Obj.(*corev1.ConfigMap); ok && cm.Name == layout.DSConfigMapName("sec") {
			return cm.Data[layout.DSFile]
		}
	}
	return ""
}

func zoneOf(files map[string]string, zone string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		if strings.HasPrefix(k, "K"+zone+"._") {
			out[k] = v
		}
	}
	return out
}

// TestDNSSECKeysAcrossRenders: keys are made once, kept from the previous
// output, made for a new zone, dropped with a removed zone.
func TestDNSSECKeysAcrossRenders(t *testing.T) {
	first, rs := mustRun(t, signedInput(t, kskZsk, "a.example", "b.example"), nil, &testutil.DetRand{})
	keys := keyFiles(first)
	if got := len(zoneOf(keys, "a.example")); got != 6 {
		t.Fatalf("zone a.example: %d key files, want 6 (KSK and ZSK: .key, .private, .state)", got)
	}
	var infos int
	for _, r := range rs {
		if r.Severity == diag.Info && strings.Contains(r.Message, "IN DS ") {
			infos++
		}
	}
	if infos != 2 {
		t.Errorf("want one DS info result per signed zone (2), got %d: %v", infos, rs)
	}
	if n := strings.Count(dsText(first), " IN DS "); n != 2 {
		t.Errorf("ds.txt has %d DS records, want 2 (one KSK per zone):\n%s", n, dsText(first))
	}

	t.Run("re-render", func(t *testing.T) {
		again, rs := mustRun(t, signedInput(t, kskZsk, "a.example", "b.example"), previous(t, first), noRand{})
		if diff := cmp.Diff(keys, keyFiles(again)); diff != "" {
			t.Errorf("a re-render changed key material (-before +after):\n%s", diff)
		}
		for _, r := range rs {
			if r.Severity == diag.Warning {
				t.Errorf("unexpected warning on a re-render: %v", r)
			}
		}
	})
	t.Run("new zone", func(t *testing.T) {
		more, _ := mustRun(t, signedInput(t, kskZsk, "a.example", "b.example", "c.example"), previous(t, first), bytes.NewReader(bytes.Repeat([]byte{42}, 4096)))
		got := keyFiles(more)
		if diff := cmp.Diff(zoneOf(keys, "a.example"), zoneOf(got, "a.example")); diff != "" {
			t.Errorf("adding a zone changed another zone's keys:\n%s", diff)
		}
		if n := len(zoneOf(got, "c.example")); n != 6 {
			t.Errorf("the new zone has %d key files, want 6", n)
		}
	})
	t.Run("removed zone", func(t *testing.T) {
		fewer, _ := mustRun(t, signedInput(t, kskZsk, "a.example"), previous(t, first), noRand{})
		got := keyFiles(fewer)
		if n := len(zoneOf(got, "b.example")); n != 0 {
			t.Errorf("the removed zone's keys stay: %d files", n)
		}
		if diff := cmp.Diff(zoneOf(keys, "a.example"), got); diff != "" {
			t.Errorf("the remaining zone's keys changed:\n%s", diff)
		}
		if strings.Contains(dsText(fewer), "b.example") {
			t.Errorf("ds.txt still names the removed zone:\n%s", dsText(fewer))
		}
	})
	t.Run("secret changed", func(t *testing.T) {
		prev := previous(t, first)
		for i, p := range prev {
			if p.Kind == "Secret" && p.Src.Ref.Name == layout.DNSSECSecretName("sec") {
				data := map[string][]byte{}
				for k, v := range p.Data {
					if !strings.HasPrefix(k, "Ka.example.") {
						data[k] = v
					}
				}
				prev[i].Data = data // a.example's keys lost from the Secret
			}
		}
		objs, rs := runRand(signedInput(t, kskZsk, "a.example", "b.example"), prev, bytes.NewReader(bytes.Repeat([]byte{77}, 4096)))
		var errs []string
		for _, r := range rs {
			if r.Severity == diag.Error {
				errs = append(errs, r.Source.Ref.Name+": "+r.Message)
			}
		}
		if len(errs) != 1 || !strings.HasPrefix(errs[0], "z0: cannot change the DNSSEC keys of signed zone \"a.example\"") || objs != nil {
			t.Errorf("a key Secret changed under signed zone a.example: want one error on its BindZone and nothing rendered, got %q", errs)
		}
		// Re-keying on purpose: without the record of the last keys the
		// new keys are accepted.
		var noRecord []prior.Object
		for _, p := range prev {
			if p.Src.Ref.Name != layout.DSConfigMapName("sec") {
				noRecord = append(noRecord, p)
			}
		}
		mustRun(t, signedInput(t, kskZsk, "a.example", "b.example"), noRecord, bytes.NewReader(bytes.Repeat([]byte{77}, 4096)))
	})
	t.Run("policy algorithm changed", func(t *testing.T) {
		_, rs := runRand(signedInput(t, `[{role: csk, algorithm: ed25519}]`, "a.example", "b.example"), previous(t, first), &testutil.DetRand{})
		var errs []string
		for _, r := range rs {
			if r.Severity == diag.Error {
				errs = append(errs, r.Message)
			}
		}
		if len(errs) != 4 || !strings.Contains(errs[0], "which no key of the policy (csk ed25519) matches") {
			t.Errorf("keys that disagree with the policy: want an error per kept key (4), got %q", errs)
		}
	})
}

// TestDNSSECBringYourOwnKeys: a user's K*.key/.private files (dnssec-keygen,
// any file names, no .state) in the cluster's DNSSEC Secret are kept, under
// canonical names, with a .state, and their DS is the output.
func TestDNSSECBringYourOwnKeys(t *testing.T) {
	byo := map[string][]byte{}
	var wantDS string
	for i, role := range []string{dnssec.RoleKSK, dnssec.RoleZSK} {
		k, err := dnssec.Generate(bytes.NewReader(bytes.Repeat([]byte{byte(30 + i)}, 64)), "a.example.", dnssec.Spec{Role: role, Algorithm: dns.ECDSAP256SHA256})
		if err != nil {
			t.Fatal(err)
		}
		byo[fmt.Sprintf("mykey%d.key", i)] = k.KeyFile()
		byo[fmt.Sprintf("mykey%d.private", i)] = k.PrivateFile()
		if k.SEP() {
			d := k.DS()
			wantDS = fmt.Sprintf("a.example. 3600 IN DS %d 13 2 %s\n", d.KeyTag, strings.ToUpper(d.Digest))
		}
	}
	prev := []prior.Object{{Kind: "Secret", Data: byo}}
	prev[0].Src.Ref.Namespace, prev[0].Src.Ref.Name = "dns", layout.DNSSECSecretName("sec")
	// TSIG and rndc material is new (no previous output); no DNSSEC key is.
	objs, rs := mustRun(t, signedInput(t, kskZsk, "a.example"), prev, &testutil.DetRand{})
	if strings.Count(fmt.Sprint(rs), "IN DS") != 1 {
		t.Errorf("want one DS info result, got %v", rs)
	}
	if diff := cmp.Diff(wantDS, dsText(objs)); diff != "" {
		t.Errorf("DS of the imported KSK (-want +got):\n%s", diff)
	}
	files := keyFiles(objs)
	if len(files) != 6 {
		t.Errorf("want the two keys' three files each under canonical names, got %v", mapKeys(files))
	}
	for k := range files {
		if !strings.HasPrefix(k, "Ka.example._013_") {
			t.Errorf("file %q is not named K<zone>_<alg>_<tag>.<ext>", k)
		}
	}

	bad := map[string][]byte{"x.key": byo["mykey0.key"], "x.private": byo["mykey1.private"]}
	prev[0].Data = bad
	_, rs = runRand(signedInput(t, kskZsk, "a.example"), prev, &testutil.DetRand{})
	if !rs.HasErrors() || !strings.Contains(fmt.Sprint(rs), `cannot use file "x.key" of the DNSSEC key Secret "sec-dnssec"`) {
		t.Errorf("a .private that does not belong to its .key: want a located error, got %v", rs)
	}
}

func mapKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestDNSSECFiniteKSKLifetimeWarns: a KSK that named would roll on its own
// volume (out of the Secret's reach) is flagged on the policy; a ZSK is not.
func TestDNSSECFiniteKSKLifetimeWarns(t *testing.T) {
	_, rs := mustRun(t, signedInput(t, `[{role: ksk, algorithm: ecdsap256sha256, lifetime: P1Y}, {role: zsk, algorithm: ecdsap256sha256, lifetime: P90D}]`, "a.example"), nil, &testutil.DetRand{})
	var got []string
	for _, r := range rs {
		if r.Severity == diag.Warning {
			got = append(got, r.Source.Ref.Kind+" "+r.Field)
		}
	}
	if diff := cmp.Diff([]string{"BindDNSSECPolicy spec.keys[0].lifetime"}, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestDNSSECImportExisting: with spec.dnssec.importExisting the render
// writes no key Secret (it is managed elsewhere), checks the listed public
// keys against the policy and outputs their DS.
func TestDNSSECImportExisting(t *testing.T) {
	r := bytes.NewReader(bytes.Repeat([]byte{61}, 256))
	var pub []string
	var wantDS string
	for _, role := range []string{dnssec.RoleKSK, dnssec.RoleZSK} {
		k, err := dnssec.Generate(r, "a.example.", dnssec.Spec{Role: role, Algorithm: dns.ECDSAP256SHA256})
		if err != nil {
			t.Fatal(err)
		}
		pub = append(pub, k.DNSKEY.String())
		if k.SEP() {
			d := k.DS()
			wantDS = fmt.Sprintf("a.example. 3600 IN DS %d 13 2 %s\n", d.KeyTag, strings.ToUpper(d.Digest))
		}
	}
	withImport := func(keys []string) []model.Item {
		items := signedInput(t, kskZsk, "a.example")
		var quoted []string
		for _, k := range keys {
			quoted = append(quoted, fmt.Sprintf("%q", k))
		}
		extra, err := testutil.DecodeItems("cluster.yaml", []byte(`apiVersion: bind.unkin.net/v1alpha1
kind: BindCluster
metadata: {name: sec, namespace: dns}
spec:
  dnssec:
    importExisting: true
    publicKeys: [`+strings.Join(quoted, ", ")+`]
`))
		if err != nil {
			t.Fatal(err)
		}
		return append(extra, items[1:]...) // replace the plain BindCluster
	}
	objs, _ := mustRun(t, withImport(pub), nil, &testutil.DetRand{}) // TSIG and rndc material only
	if keyFiles(objs) != nil {
		t.Errorf("an imported key Secret was rendered: it is managed elsewhere")
	}
	if diff := cmp.Diff(wantDS, dsText(objs)); diff != "" {
		t.Errorf("DS of the imported KSK (-want +got):\n%s", diff)
	}

	cases := map[string]struct {
		reason string
		keys   []string
		field  string
		msg    string
	}{
		"zsk missing": {
			reason: "every key of the policy must be listed: named would make the missing one",
			keys:   pub[:1], field: "spec.dnssec.publicKeys", msg: "has no DNSKEY for every key of the policy",
		},
		"not a dnskey": {
			reason: "a public key is a DNSKEY record",
			keys:   []string{pub[0], pub[1], "a.example. IN A 192.0.2.1"}, field: "spec.dnssec.publicKeys[2]", msg: "cannot read the DNSKEY",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, rs := runRand(withImport(tc.keys), nil, &testutil.DetRand{})
			found := false
			for _, r := range rs {
				if r.Severity == diag.Error && r.Source.Ref.Kind == "BindCluster" && r.Field == tc.field && strings.Contains(r.Message, tc.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: want an error at BindCluster %s saying %q, got %v", tc.reason, tc.field, tc.msg, rs)
			}
		})
	}
}

// TestDNSSECSecretBudget: the Secret stays under DNSSECBudget; a cluster
// whose keys would not fit is refused, with the numbers README quotes.
func TestDNSSECSecretBudget(t *testing.T) {
	one, _ := mustRun(t, signedInput(t, kskZsk, "zone00000.example"), nil, &testutil.DetRand{})
	per := 0
	for k, v := range keyFiles(one) {
		per += len(k) + len(v)
	}
	fit := render.DNSSECBudget / per
	t.Logf("an ECDSA KSK+ZSK zone takes %d bytes of the Secret: %d zones fit in %d", per, fit, render.DNSSECBudget)
	if fit < 350 || fit > 450 {
		t.Errorf("README says about 400 zones with an ECDSA KSK and ZSK fit; %d do", fit)
	}
	var zones []string
	for i := 0; i <= fit; i++ {
		zones = append(zones, fmt.Sprintf("zone%05d.example", i))
	}
	_, rs := runRand(signedInput(t, kskZsk, zones...), nil, &testutil.DetRand{})
	if !strings.Contains(fmt.Sprint(rs), "cannot keep the DNSSEC keys of") {
		t.Errorf("%d signed zones: want the Secret refused as too large", len(zones))
	}
}

// TestDNSSECStateLifetimeIsBINDs: the Lifetime of every key's .state is
// the seconds BIND itself writes for the policy's lifetime (dnssec-keygen
// -k reads the same dnssec-policy from a named.conf and writes its own
// .state, on every release): a month is 31 days and a year 365, as in
// lib/isccfg/duration.c, not the 30 days bind-fn once counted.
func TestDNSSECStateLifetimeIsBINDs(t *testing.T) {
	for _, life := range []string{"P1M", "P1Y", "P1Y2M3DT4H5M6S", "P13W", "P400D", "p3m", "unlimited"} {
		t.Run(life, func(t *testing.T) {
			objs, _ := mustRun(t, signedInput(t, `[{role: ksk, algorithm: ecdsap256sha256}, {role: zsk, algorithm: ecdsap256sha256, lifetime: "`+life+`"}]`, "a.example"), nil, &testutil.DetRand{})
			ours := ""
			for name, text := range zoneOf(keyFiles(objs), "a.example") {
				if strings.HasSuffix(name, dnssec.SuffixState) && strings.Contains(text, "KSK: no") {
					ours = stateLifetime(t, text)
				}
			}
			for _, r := range bindtools.Releases {
				bind, err := keygenLifetime(t, r, life)
				if err != nil {
					t.Fatalf("%s: %v", r, err)
				}
				if ours != bind {
					t.Errorf("lifetime %s: the rendered ZSK .state says Lifetime %s, %s's dnssec-keygen -k writes %s", life, ours, r, bind)
				}
			}
		})
	}
}

// keygenLifetime is the Lifetime BIND's dnssec-keygen writes into the
// .state of a ZSK of a dnssec-policy with the given lifetime.
func keygenLifetime(t *testing.T, r bindtools.Release, life string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "named.conf")
	testutil.WriteFile(t, conf, []byte(`dnssec-policy "p" { keys { ksk lifetime unlimited algorithm ecdsap256sha256; zsk lifetime `+life+` algorithm ecdsap256sha256; }; };`+"\n"))
	out, err := r.Offline(t, "dnssec-keygen", "-q", "-k", "p", "-l", conf, "-K", dir, "a.example").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("dnssec-keygen -k: %v\n%s", err, out)
	}
	states, _ := filepath.Glob(filepath.Join(dir, "*.state"))
	for _, f := range states {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if strings.Contains(string(b), "KSK: no") {
			return stateLifetime(t, string(b)), nil
		}
	}
	return "", fmt.Errorf("dnssec-keygen -k wrote no ZSK .state among %v", states)
}

func stateLifetime(t *testing.T, state string) string {
	t.Helper()
	for _, line := range strings.Split(state, "\n") {
		if v, ok := strings.CutPrefix(line, "Lifetime: "); ok {
			return v
		}
	}
	t.Fatalf("no Lifetime in .state:\n%s", state)
	return ""
}
