package render_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// otherSigner is the second provider's KSK and ZSK of the child zone.
func otherSigner(t *testing.T) (ksk, zsk *dnssec.Key) {
	t.Helper()
	var err error
	ksk, err = dnssec.Generate(bytes.NewReader(bytes.Repeat([]byte{31}, 64)), childZone, dnssec.Spec{Role: dnssec.RoleKSK, Algorithm: dns.ECDSAP256SHA256})
	if err != nil {
		t.Fatal(err)
	}
	zsk, err = dnssec.Generate(bytes.NewReader(bytes.Repeat([]byte{32}, 64)), childZone, dnssec.Spec{Role: dnssec.RoleZSK, Algorithm: dns.ECDSAP256SHA256})
	if err != nil {
		t.Fatal(err)
	}
	return ksk, zsk
}

func withOthers(t *testing.T, items []model.Item, image string, keys ...*dnssec.Key) []model.Item {
	t.Helper()
	var lines []any
	for _, k := range keys {
		lines = append(lines, k.DNSKEY.String())
	}
	items = testutil.EditItem(t, items, "BindZone", "child-parent-example", func(obj map[string]any) {
		obj["spec"].(map[string]any)["dnssecOtherSigners"] = lines
	})
	if image != "" {
		items = testutil.EditItem(t, items, "BindCluster", "par", func(obj map[string]any) {
			obj["spec"].(map[string]any)["image"] = image
		})
	}
	return items
}

// TestDNSSECOtherSigners: the other signer's DNSKEYs join the child's zone
// file, its KSK's DS joins the parent's (both digests, as the child's own)
// and ds.txt; a BIND 9.18 cluster is refused on the field.
func TestDNSSECOtherSigners(t *testing.T) {
	kB, zB := otherSigner(t)
	objs, _ := mustRun(t, withOthers(t, parentFixture(t), "", kB, zB), nil, &testutil.DetRand{})
	c := testutil.Clusters(t, objs)["par"]
	var tags []uint16
	for _, s := range rrsIn(t, zoneText(t, c, childZone+"."), childZone+".", dns.TypeDNSKEY) {
		rr, _ := dns.NewRR(s)
		tags = append(tags, rr.(*dns.DNSKEY).KeyTag())
	}
	if diff := cmp.Diff(sortedTags(kB.Tag(), zB.Tag()), sortedTags(tags...)); diff != "" {
		t.Errorf("DNSKEYs in the child's zone file (-other signer's +rendered):\n%s", diff)
	}
	if got := parentDSTags(t, objs); !slices.Contains(got, kB.Tag()) || slices.Contains(got, zB.Tag()) || len(got) != 2 {
		t.Errorf("the parent's DS tags of the child are %v, want ours and the other KSK %d", got, kB.Tag())
	}
	if ds := c.ConfigMaps[layout.DSConfigMapName("par")].Data[layout.DSFile]; !strings.Contains(ds, fmt.Sprintf(" DS %d 13 2 ", kB.Tag())) {
		t.Errorf("ds.txt lacks the other signer's DS:\n%s", ds)
	}
	_, rs := runRand(withOthers(t, parentFixture(t), "internetsystemsconsortium/bind9:9.18", kB, zB), nil, &testutil.DetRand{})
	if !slices.ContainsFunc(rs, func(r diag.Result) bool { return r.Severity == diag.Error && r.Field == "spec.dnssecOtherSigners" }) {
		t.Errorf("a 9.18 cluster with other signers rendered without an error on spec.dnssecOtherSigners: %v", rs)
	}
	bad := testutil.EditItem(t, parentFixture(t), "BindZone", "child-parent-example", func(obj map[string]any) {
		obj["spec"].(map[string]any)["dnssecOtherSigners"] = []any{"www.child.parent.example. 300 IN A 192.0.2.1", "other.example. 3600 IN DNSKEY " + strings.SplitN(kB.DNSKEY.String(), "DNSKEY", 2)[1]}
	})
	_, rs = runRand(bad, nil, &testutil.DetRand{})
	var fields []string
	for _, r := range rs {
		if r.Severity == diag.Error {
			fields = append(fields, r.Field)
		}
	}
	if diff := cmp.Diff([]string{"spec.dnssecOtherSigners[0]", "spec.dnssecOtherSigners[1]"}, fields); diff != "" {
		t.Errorf("errors on bad DNSKEY lines (-want +got):\n%s\n%v", diff, rs)
	}
}

// TestBINDMultiSigner (RFC 8901 model 2, BIND 9.20): signer A is the
// rendered cluster (parent and child, the other signer's keys in the
// child's zone file, both KSKs' DS in the parent); signer B is a
// hand-written named 9.20 that signs the child with its own keys, A's
// DNSKEYs in its zone file. A resolver for each signer (parent from A,
// the child from A or from B) and delv straight at A are asked in turn
// every second: every answer validates from the parent's anchor, each
// signer serves the combined DNSKEY set. The control: rendered without
// B's keys, the resolver asking B fails.
func TestBINDMultiSigner(t *testing.T) {
	r := bindtools.BIND920
	bindtools.RequireRelease(t, r)
	kB, zB := otherSigner(t)
	objs, _ := mustRun(t, withOthers(t, rollPackage(t, nil), "", kB, zB), nil, &testutil.DetRand{})
	a := newRollLab(t, r, objs)
	a.waitFor("delv to validate through signer A", func() error { return delvOnce(a) })
	secret := a.cluster().Secrets[layout.DNSSECSecretName("par")].Data
	keysA, _ := dnssec.Parse(secret)
	var aLines []string
	var all []uint16
	for _, k := range keysA {
		if k.Zone() == childZone+"." {
			rr := *k.DNSKEY
			rr.Hdr.Ttl = 2 // the policy's dnskey-ttl (and under its max-zone-ttl)
			aLines = append(aLines, rr.String())
			all = append(all, k.Tag())
		}
	}
	all = sortedTags(append(all, kB.Tag(), zB.Tag())...)

	// Signer B: its own keys, the same zone content and A's DNSKEYs.
	dir := filepath.Join(a.dir, "signer-b")
	for _, k := range []*dnssec.Key{kB, zB} {
		for _, suf := range []string{dnssec.SuffixKey, dnssec.SuffixPrivate, dnssec.SuffixState} {
			testutil.WriteFile(t, filepath.Join(dir, "keys", k.Base()+suf), k.Files()[k.SecretKey(suf)])
		}
	}
	testutil.WriteFile(t, filepath.Join(dir, "db.child"), []byte(zoneText(t, a.cluster(), childZone+".")+strings.Join(aLines, "\n")+"\n"))
	stmts, err := nc.ParseStatements(a.cluster().NamedConf(t, layout.NamedConfPrimary))
	if err != nil {
		t.Fatal(err)
	}
	var pol []nc.Stmt
	for _, s := range stmts {
		if s.Name() == "dnssec-policy" {
			pol = append(pol, s)
		}
	}
	polText, err := nc.Format(pol...)
	if err != nil {
		t.Fatal(err)
	}
	portB := bindtools.FreePort(t)
	testutil.WriteFile(t, filepath.Join(dir, "named.conf"), []byte(fmt.Sprintf(`options { directory %q; listen-on port %d { 127.0.0.1; }; listen-on-v6 { none; }; pid-file none; recursion no; dnssec-validation no; notify no; };
%s
zone %q { type primary; file "db.child"; dnssec-policy "child"; inline-signing yes; key-directory %q; };
`, dir, portB, polText, childZone, filepath.Join(dir, "keys"))))
	logB := &logBuffer{}
	a.named(filepath.Join(dir, "named.conf"), logB)
	addrB := fmt.Sprintf("127.0.0.1:%d", portB)

	// A resolver whose child answers come from B.
	rdir := filepath.Join(a.dir, "resolver-b")
	rportB := bindtools.FreePort(t)
	testutil.WriteFile(t, filepath.Join(rdir, "anchor.conf"), []byte(a.anchor()))
	testutil.WriteFile(t, filepath.Join(rdir, "named.conf"), []byte(fmt.Sprintf(`options { directory %q; listen-on port %d { 127.0.0.1; }; listen-on-v6 { none; }; pid-file none; recursion yes; allow-recursion { 127.0.0.1; }; dnssec-validation yes; };
include "anchor.conf";
zone %q { type forward; forward only; forwarders { 127.0.0.1 port %d; }; };
zone %q { type forward; forward only; forwarders { 127.0.0.1 port %d; }; };
`, rdir, rportB, parentName, a.port, childZone, portB)))
	a.named(filepath.Join(rdir, "named.conf"), &logBuffer{})

	for name, addr := range map[string]string{"A": a.addr(), "B": addrB} {
		a.waitFor("signer "+name+" to serve the combined DNSKEY set", func() error {
			if got := servedTags(addr, childZone+"."); !slices.Equal(got, all) {
				return fmt.Errorf("signer %s serves DNSKEYs %v, want %v\nB's log:\n%s", name, got, all, logB)
			}
			return nil
		})
	}
	delv := bindtools.BINDPath(t, "delv")
	anchor := filepath.Join(a.dir, "resolver", "anchor.conf")
	var ok int
	var failures []string
	for i := range 30 {
		port := []int{a.port, a.rport, rportB}[i%3]
		out, _ := exec.Command(delv, "@127.0.0.1", "-p", strconv.Itoa(port), "-a", anchor, "+root="+parentName, "+tcp", "www."+childZone, "A").CombinedOutput()
		if strings.Contains(string(out), "; fully validated") {
			ok++
		} else {
			failures = append(failures, fmt.Sprintf("port %d: %s", port, out))
		}
		time.Sleep(time.Second / 3)
	}
	t.Logf("%s: DNSKEY set %v on both signers; delv: %d validated, %d failed", r, all, ok, len(failures))
	if len(failures) > 0 {
		t.Errorf("delv failed %d times:\n%s\nB's log:\n%s", len(failures), strings.Join(failures, "\n"), logB)
	}
	// The control: without B's keys in the render, the parent holds no DS
	// of B's KSK, and the resolver that asks B no longer validates.
	without, _ := mustRun(t, rollPackage(t, nil), previous(t, objs), noRand{})
	a.apply(without)
	a.waitFor("the resolver asking B to fail without B's DS at the parent", func() error {
		out, _ := exec.Command(delv, "@127.0.0.1", "-p", strconv.Itoa(rportB), "-a", anchor, "+root="+parentName, "+tcp", "www."+childZone, "A").CombinedOutput()
		if strings.Contains(string(out), "; fully validated") {
			return fmt.Errorf("still validates")
		}
		return nil
	})
	// B's signatures are B's: the resolver that asks B validated them.
	m := new(dns.Msg)
	m.SetQuestion("www."+childZone+".", dns.TypeA)
	m.SetEdns0(4096, true)
	resp, _, err := (&dns.Client{Net: "tcp", Timeout: time.Second}).Exchange(m, addrB)
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range resp.Answer {
		if sig, ok := rr.(*dns.RRSIG); ok && sig.KeyTag != zB.Tag() {
			t.Errorf("signer B signs www with key %d, want its own ZSK %d", sig.KeyTag, zB.Tag())
		}
	}
}
