package render_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// parentFixture is the package of the lab's TestDNSSECParent (one source
// for both): a signed parent and its signed child in cluster par.
func parentFixture(t *testing.T) []model.Item {
	t.Helper()
	file := filepath.Join("..", "..", "test", "multipod", "testdata", "dnssec-parent.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	items, err := testutil.DecodeItems(file, b)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// zoneText is the rendered zone file of zone (its $ORIGIN), from the
// cluster's zones ConfigMaps.
func zoneText(t *testing.T, c *testutil.Cluster, zone string) string {
	t.Helper()
	for _, cm := range c.ConfigMaps {
		for _, text := range cm.Data {
			if strings.HasPrefix(text, "$ORIGIN "+zone+"\n") {
				return text
			}
		}
	}
	t.Fatalf("no zone file of %s rendered", zone)
	return ""
}

// rrsIn parses a zone file with miekg/dns and returns the RRs of type typ
// at owner, printed.
func rrsIn(t *testing.T, text, owner string, typ uint16) []string {
	t.Helper()
	zp := dns.NewZoneParser(strings.NewReader(text), "", "")
	var out []string
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		if rr.Header().Rrtype == typ && dns.CanonicalName(rr.Header().Name) == owner {
			out = append(out, rr.String())
		}
	}
	if err := zp.Err(); err != nil {
		t.Fatalf("rendered zone file does not parse: %v", err)
	}
	slices.Sort(out)
	return out
}

// TestDNSSECParentGetsChildDS: the parent zone's file holds the DS of the
// child's KSK, one per digest type of the child's policy, made from the
// keys the same render ships; a re-render from its own output keeps them,
// and the child's named.conf asks the cluster itself for the DS.
func TestDNSSECParentGetsChildDS(t *testing.T) {
	objs, _ := mustRun(t, parentFixture(t), nil, &testutil.DetRand{})
	c := testutil.Clusters(t, objs)["par"]
	keys, probs := dnssec.Parse(c.Secrets[layout.DNSSECSecretName("par")].Data)
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	var want []string
	for _, k := range keys {
		if k.Zone() == "child.parent.example." && k.SEP() {
			for _, d := range []uint8{dns.SHA256, dns.SHA384} {
				ds := k.DNSKEY.ToDS(d)
				ds.Hdr.Ttl = 86400 // the child policy's parent-ds-ttl: BIND's default
				want = append(want, ds.String())
			}
		}
	}
	slices.Sort(want)
	if len(want) != 2 {
		t.Fatalf("the child has %d DS from its KSK, want 2 (sha-256, sha-384)", len(want))
	}
	got := rrsIn(t, zoneText(t, c, "parent.example."), "child.parent.example.", dns.TypeDS)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DS in the parent's zone file (-child's keys +rendered):\n%s", diff)
	}
	again, _ := mustRun(t, parentFixture(t), previous(t, objs), noRand{})
	if diff := cmp.Diff(zoneText(t, c, "parent.example."), zoneText(t, testutil.Clusters(t, again)["par"], "parent.example.")); diff != "" {
		t.Errorf("a re-render from the previous output changed the parent (-first +again):\n%s", diff)
	}
	conf := c.NamedConf(t, layout.NamedConfPrimary)
	for _, s := range []string{"parental-agents { 127.0.0.1; };", "checkds explicit;", "cdnskey yes;", `cds-digest-types {`} {
		if !strings.Contains(conf, s) {
			t.Errorf("the primary's named.conf lacks %q:\n%s", s, conf)
		}
	}
}

// TestDNSSECParentOptions: what a policy says about the parent, checked
// with a located error each, and what a BIND 9.18 cluster cannot honour.
func TestDNSSECParentOptions(t *testing.T) {
	cases := map[string]struct {
		reason string
		edit   func(kind, name string, obj map[string]any)
		want   []string // "Kind field" of each error
	}{
		"fine": {reason: "the fixture renders"},
		"9.18 digests": {
			reason: "BIND 9.18 publishes a SHA-256 CDS only: sha-384 is refused where 9.18 runs; cdnskey true and checkds explicit with agents are what 9.18 does, so they pass",
			edit: func(kind, _ string, obj map[string]any) {
				if kind == "BindCluster" {
					obj["spec"].(map[string]any)["image"] = "internetsystemsconsortium/bind9:9.18"
				}
			},
			want: []string{"BindDNSSECPolicy spec.cdsDigestTypes"},
		},
		"9.18 checkds yes": {
			reason: "9.18 never asks the parent's NS",
			edit: func(kind, name string, obj map[string]any) {
				if kind == "BindCluster" {
					obj["spec"].(map[string]any)["image"] = "registry.example/bind9:9.18.28"
				}
				if kind == "BindDNSSECPolicy" && name == "child" {
					obj["spec"].(map[string]any)["checkDS"] = "yes"
					obj["spec"].(map[string]any)["cdsDigestTypes"] = []any{"sha-256"}
					obj["spec"].(map[string]any)["cdnskey"] = false
				}
			},
			want: []string{"BindDNSSECPolicy spec.cdnskey", "BindDNSSECPolicy spec.checkDS"},
		},
		"bad digest": {
			reason: "SHA-1 is refused (RFC 8624), and a digest type listed twice",
			edit: func(kind, name string, obj map[string]any) {
				if kind == "BindDNSSECPolicy" && name == "child" {
					obj["spec"].(map[string]any)["cdsDigestTypes"] = []any{"sha-1", "sha-256", "SHA-256"}
				}
			},
			want: []string{"BindDNSSECPolicy spec.cdsDigestTypes[0]", "BindDNSSECPolicy spec.cdsDigestTypes[2]"},
		},
		"bad agent": {
			reason: "parental agents are addresses (BIND takes no names)",
			edit: func(kind, name string, obj map[string]any) {
				if kind == "BindDNSSECPolicy" && name == "child" {
					obj["spec"].(map[string]any)["parentalAgents"] = map[string]any{"addresses": []any{"192.0.2.1:5353", "ns1.example.", "[2001:db8::1]:53"}}
				}
			},
			want: []string{"BindDNSSECPolicy spec.parentalAgents.addresses[1]"},
		},
		"no parent in cluster": {
			reason: "parentInCluster on a zone whose parent the cluster does not serve",
			edit: func(kind, name string, obj map[string]any) {
				if kind == "BindDNSSECPolicy" && name == "parent" {
					obj["spec"].(map[string]any)["parentalAgents"] = map[string]any{"parentInCluster": true}
				}
			},
			want: []string{"BindDNSSECPolicy spec.parentalAgents.parentInCluster"},
		},
		"own DS": {
			reason: "the parent's own DS at the child's name would be a second source for the RRset",
			edit: func(kind, name string, obj map[string]any) {
				if kind == "BindZone" && name == "parent-example" {
					recs := obj["spec"].(map[string]any)["records"].([]any)
					obj["spec"].(map[string]any)["records"] = append(recs, map[string]any{"name": "child", "type": "DS", "values": []any{"1 13 2 " + strings.Repeat("AB", 32)}})
				}
			},
			want: []string{"BindZone spec.records"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			items := parentFixture(t)
			if tc.edit != nil {
				for _, kn := range [][2]string{{"BindCluster", "par"}, {"BindDNSSECPolicy", "parent"}, {"BindDNSSECPolicy", "child"}, {"BindZone", "parent-example"}} {
					items = testutil.EditItem(t, items, kn[0], kn[1], func(obj map[string]any) { tc.edit(kn[0], kn[1], obj) })
				}
			}
			_, rs := runRand(items, nil, &testutil.DetRand{})
			var got []string
			for _, r := range rs {
				if r.Severity == diag.Error {
					got = append(got, r.Source.Ref.Kind+" "+r.Field)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: errors (-want +got):\n%s\n%v", tc.reason, diff, rs)
			}
		})
	}
}

// TestDNSSECParentCheckConf: the child's and parent's statements load in
// real named-checkconf of BIND 9.20 (every option: parental-agents,
// checkds, cdnskey, cds-digest-types) and, on a cluster whose image is
// 9.18, in BIND 9.18 with what it reads.
func TestDNSSECParentCheckConf(t *testing.T) {
	bindtools.RequireBIND(t)
	check := func(t *testing.T, r bindtools.Release, items []model.Item) {
		objs, _ := mustRun(t, items, nil, &testutil.DetRand{})
		c := testutil.Clusters(t, objs)["par"]
		root := t.TempDir()
		testutil.LayPod(t, root, c)
		for _, f := range []string{layout.NamedConfPrimary, layout.NamedConfSecondary} {
			if out, err := r.NamedCheckconf(t, root, layout.ConfigFile(f)); err != nil {
				t.Errorf("%s %s: named-checkconf -z: %v\n%s", r, f, err, out)
			}
		}
	}
	t.Run("9.20", func(t *testing.T) { check(t, bindtools.BIND920, parentFixture(t)) })
	t.Run("9.18", func(t *testing.T) {
		items := testutil.EditItem(t, parentFixture(t), "BindCluster", "par", func(obj map[string]any) {
			obj["spec"].(map[string]any)["image"] = "internetsystemsconsortium/bind9:9.18"
		})
		items = testutil.EditItem(t, items, "BindDNSSECPolicy", "child", func(obj map[string]any) {
			obj["spec"].(map[string]any)["cdsDigestTypes"] = []any{"sha-256"}
		})
		check(t, bindtools.BIND918, items)
	})
}

var _ = render.Options{}

// TestDNSSECParentDSInPlan: delegating the child (its NS added to the
// parent) brings the child's DS into the parent, and bind-fn plan's
// report of the change names the DS records.
func TestDNSSECParentDSInPlan(t *testing.T) {
	undelegated := testutil.EditItem(t, parentFixture(t), "BindZone", "parent-example", func(obj map[string]any) {
		sp := obj["spec"].(map[string]any)
		var keep []any
		for _, r := range sp["records"].([]any) {
			if r.(map[string]any)["type"] != "NS" {
				keep = append(keep, r)
			}
		}
		sp["records"] = keep
	})
	before, _ := mustRun(t, undelegated, nil, &testutil.DetRand{})
	after, _ := mustRun(t, parentFixture(t), previous(t, before), noRand{})
	oldObjs, err := plan.FromRender(before)
	if err != nil {
		t.Fatal(err)
	}
	newObjs, err := plan.FromRender(after)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compare(oldObjs, newObjs)
	if err != nil {
		t.Fatal(err)
	}
	md := p.Markdown(plan.Limits{RRsets: 100, Zones: 10, ZoneLines: 10, Config: 100})
	c := testutil.Clusters(t, after)["par"]
	for _, ds := range rrsIn(t, zoneText(t, c, "parent.example."), "child.parent.example.", dns.TypeDS) {
		rr, err := dns.NewRR(ds)
		if err != nil {
			t.Fatal(err)
		}
		digest := strings.ToUpper(rr.(*dns.DS).Digest)
		if !strings.Contains(strings.ToUpper(md), digest) {
			t.Errorf("the plan does not show the DS with digest %s:\n%s", digest, md)
		}
	}
}

// TestDNSSECParentFollowsRekey: when the child is re-keyed on purpose (its
// key files and the record of the last keys removed from the package, as
// README "DNSSEC" says), the same render writes the new KSK's DS into the
// parent: the parent never carries a DS of keys the Secret no longer has.
func TestDNSSECParentFollowsRekey(t *testing.T) {
	first, _ := mustRun(t, parentFixture(t), nil, &testutil.DetRand{})
	var kept []render.Object
	for _, o := range first {
		switch v := o.Obj.(type) {
		case *corev1.ConfigMap:
			if v.Name == layout.DSConfigMapName("par") {
				continue
			}
		case *corev1.Secret:
			if v.Name == layout.DNSSECSecretName("par") {
				s := v.DeepCopy()
				for name := range s.Data {
					if strings.HasPrefix(name, "Kchild.parent.example.") {
						delete(s.Data, name)
					}
				}
				o.Obj = s
			}
		}
		kept = append(kept, o)
	}
	second, _ := mustRun(t, parentFixture(t), previous(t, kept), bytes.NewReader(bytes.Repeat([]byte{42}, 4096)))
	c := testutil.Clusters(t, second)["par"]
	keys, probs := dnssec.Parse(c.Secrets[layout.DNSSECSecretName("par")].Data)
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	var want []string
	for _, k := range keys {
		if k.Zone() == "child.parent.example." && k.SEP() {
			for _, d := range []uint8{dns.SHA256, dns.SHA384} {
				ds := k.DNSKEY.ToDS(d)
				ds.Hdr.Ttl = 86400
				want = append(want, ds.String())
			}
		}
	}
	slices.Sort(want)
	got := rrsIn(t, zoneText(t, c, "parent.example."), "child.parent.example.", dns.TypeDS)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the parent's DS after a re-key (-new keys +rendered):\n%s", diff)
	}
	if old := rrsIn(t, zoneText(t, testutil.Clusters(t, first)["par"], "parent.example."), "child.parent.example.", dns.TypeDS); cmp.Equal(old, got) {
		t.Errorf("the re-key left the parent's DS as it was: %v", got)
	}
}

// TestDNSSECParentValidatesOnBIND: real named (9.18 and 9.20) loads the
// rendered parent and child zone files and the rendered keys, serves the
// child's CDS and CDNSKEY (the KSK's; SHA-384 too on 9.20, as the policy
// asks; 9.18 publishes SHA-256 only), and delv,
// whose only trust anchor is the parent's key, validates a name of the
// child through the DS the render wrote into the parent; with the child's
// DS left out of the parent it does not (the control). The multi-pod lab
// runs the same package as pods (test/multipod TestDNSSECParent).
func TestDNSSECParentValidatesOnBIND(t *testing.T) {
	delv := bindtools.BINDPath(t, "delv")
	objs, _ := mustRun(t, parentFixture(t), nil, &testutil.DetRand{})
	c := testutil.Clusters(t, objs)["par"]
	keys, probs := dnssec.Parse(c.Secrets[layout.DNSSECSecretName("par")].Data)
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	var anchor strings.Builder
	anchor.WriteString("trust-anchors {\n")
	for _, k := range keys {
		if k.Zone() == "parent.example." && k.SEP() {
			ds := k.DS()
			fmt.Fprintf(&anchor, "\t\"parent.example.\" static-ds %d %d %d %q;\n", ds.KeyTag, ds.Algorithm, ds.DigestType, strings.ToUpper(ds.Digest))
		}
	}
	anchor.WriteString("};\n")
	parent := zoneText(t, c, "parent.example.")
	var noDS []string
	for _, l := range strings.Split(parent, "\n") {
		if !strings.Contains(l, " IN DS ") {
			noDS = append(noDS, l)
		}
	}
	for _, r := range bindtools.Releases {
		t.Run(r.Name, func(t *testing.T) {
			if out := parentServed(t, r, delv, keys, anchor.String(), parent); !strings.Contains(out, "; fully validated") {
				t.Errorf("delv www.child.parent.example A (anchor: the parent's DS) did not validate:\n%s", out)
			}
			// Without the DS the parent proves the child unsigned.
			if out := parentServed(t, r, delv, keys, anchor.String(), strings.Join(noDS, "\n")); !strings.Contains(out, "; unsigned answer") {
				t.Errorf("delv through a parent without the child's DS did not call the answer unsigned:\n%s", out)
			}
		})
	}
}

// parentServed runs named of release r with the parent's zone file, the
// child's rendered zone file and every rendered key, and returns delv's
// answer for www.child.parent.example A with anchor once it is a verdict
// ("fully validated" or "unsigned answer"), or its last output.
func parentServed(t *testing.T, r bindtools.Release, delv string, keys []*dnssec.Key, anchor, parent string) string {
	t.Helper()
	dir := t.TempDir()
	keyDir := filepath.Join(dir, "keys")
	for _, k := range keys {
		testutil.WriteFile(t, filepath.Join(keyDir, k.Base()+dnssec.SuffixKey), k.KeyFile())
		testutil.WriteFile(t, filepath.Join(keyDir, k.Base()+dnssec.SuffixPrivate), k.PrivateFile())
		testutil.WriteFile(t, filepath.Join(keyDir, k.Base()+dnssec.SuffixState), k.StateFile())
	}
	objs, _ := mustRun(t, parentFixture(t), nil, &testutil.DetRand{})
	testutil.WriteFile(t, filepath.Join(dir, "parent.db"), []byte(parent))
	testutil.WriteFile(t, filepath.Join(dir, "child.db"), []byte(zoneText(t, testutil.Clusters(t, objs)["par"], "child.parent.example.")))
	testutil.WriteFile(t, filepath.Join(dir, "anchor.conf"), []byte(anchor))
	cds := ""
	if r.Name != "9.18" {
		cds = `cdnskey yes; cds-digest-types { "sha-256"; "sha-384"; };`
	}
	port := bindtools.FreePort(t)
	testutil.WriteFile(t, filepath.Join(dir, "named.conf"), []byte(fmt.Sprintf(`options { directory %q; listen-on port %d { 127.0.0.1; }; listen-on-v6 { none; }; pid-file none; recursion no; dnssec-validation no; };
dnssec-policy "parent" { keys { csk lifetime unlimited algorithm ecdsap256sha256; }; };
dnssec-policy "child" { keys { ksk lifetime unlimited algorithm ecdsap256sha256; zsk lifetime unlimited algorithm ecdsap256sha256; }; %s };
zone "parent.example" { type primary; file "parent.db"; dnssec-policy "parent"; inline-signing yes; key-directory %q; };
zone "child.parent.example" { type primary; file "child.db"; dnssec-policy "child"; inline-signing yes; key-directory %q; };
`, dir, port, cds, keyDir, keyDir)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log bytes.Buffer
	argv := r.Argv(t, false, "named", "-g", "-c", filepath.Join(dir, "named.conf"))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), r.Env(t)...)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	var out []byte
	for deadline := time.Now().Add(bindtools.Hang); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, _ = exec.Command(delv, "@127.0.0.1", "-p", fmt.Sprint(port), "-a", filepath.Join(dir, "anchor.conf"), "+root=parent.example", "+tcp", "www.child.parent.example", "A").CombinedOutput()
		if strings.Contains(string(out), "; fully validated") || strings.Contains(string(out), "; unsigned answer") {
			break
		}
	}
	// The child's CDS (one per digest type the release publishes) and
	// CDNSKEY are its KSK's.
	var ksk *dnssec.Key
	for _, k := range keys {
		if k.Zone() == "child.parent.example." && k.SEP() {
			ksk = k
		}
	}
	digests := []uint8{dns.SHA256, dns.SHA384}
	if r.Name == "9.18" {
		digests = digests[:1]
	}
	var want []string
	for _, d := range digests {
		want = append(want, rdataOf(&dns.CDS{DS: *ksk.DNSKEY.ToDS(d)}))
	}
	slices.Sort(want)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if got := servedRdata(addr, "child.parent.example.", dns.TypeCDS); !cmp.Equal(want, got) {
		t.Errorf("%s: CDS of the child (-KSK +served):\n%s", r, cmp.Diff(want, got))
	}
	if got, want := servedRdata(addr, "child.parent.example.", dns.TypeCDNSKEY), []string{rdataOf(&dns.CDNSKEY{DNSKEY: *ksk.DNSKEY})}; !cmp.Equal(want, got) {
		t.Errorf("%s: CDNSKEY of the child (-KSK +served):\n%s", r, cmp.Diff(want, got))
	}
	return fmt.Sprintf("%s: %s", r, out)
}

func rdataOf(rr dns.RR) string { return strings.TrimPrefix(rr.String(), rr.Header().String()) }

// servedRdata is the sorted RDATA of the typ RRset at name that addr answers.
func servedRdata(addr, name string, typ uint16) []string {
	m := new(dns.Msg)
	m.SetQuestion(name, typ)
	cl := &dns.Client{Net: "tcp", Timeout: time.Second}
	r, _, err := cl.Exchange(m, addr)
	if err != nil {
		return nil
	}
	var out []string
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == typ {
			out = append(out, rdataOf(rr))
		}
	}
	slices.Sort(out)
	return out
}
