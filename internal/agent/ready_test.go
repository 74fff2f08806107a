package agent

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// viewServer is a DNS server that, like a named with views selected by key,
// answers a zone of view "ext" only to queries signed with key "xfr", the
// view-less zone "plain.test" to anyone, and REFUSES everything else.
func viewServer(t *testing.T, key Key) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	name := dns.Fqdn(key.Name)
	srv := &dns.Server{PacketConn: pc, TsigSecret: map[string]string{name: key.Secret}}
	srv.Handler = dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		signed := r.IsTsig() != nil && w.TsigStatus() == nil
		switch {
		case r.Opcode == dns.OpcodeNotify && signed:
		case q.Name == "view.test." && signed, q.Name == "plain.test.":
			m.Authoritative = true
			m.Answer = append(m.Answer, &dns.SOA{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
				Ns: "ns.test.", Mbox: "h.test.", Serial: 7, Refresh: 300, Retry: 60, Expire: 1209600, Minttl: 60})
		default:
			m.Rcode = dns.RcodeRefused
		}
		if r.IsTsig() != nil {
			m.SetTsig(name, dns.HmacSHA256, 300, time.Now().Unix())
		}
		_ = w.WriteMsg(m)
	})
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

func TestZoneChecker(t *testing.T) {
	key := Key{Name: "xfr", Algorithm: "hmac-sha256", Secret: "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}
	addr := viewServer(t, key)
	chk := ZoneChecker{Addr: addr, Keys: map[string]Key{"ext": key}, Timeout: bindtools.Hang}
	cases := map[string]struct {
		reason string
		ref    layout.ZoneRef
		ok     bool
	}{
		"ViewZoneSigned":   {reason: "a view's zone is asked with the view's key and found", ref: layout.ZoneRef{Zone: "view.test", View: "ext"}, ok: true},
		"PlainZone":        {reason: "a zone without a view is asked unsigned", ref: layout.ZoneRef{Zone: "plain.test"}, ok: true},
		"ViewWithoutKey":   {reason: "no key for the view and no rndc: not ready", ref: layout.ZoneRef{Zone: "view.test", View: "other"}},
		"RefusedNoRNDC":    {reason: "REFUSED without rndc to ask: not ready", ref: layout.ZoneRef{Zone: "missing.test", View: "ext"}},
		"UnsignedViewZone": {reason: "the view's zone is invisible to an unsigned query", ref: layout.ZoneRef{Zone: "view.test"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := chk.Check(context.Background(), tc.ref)
			if (err == nil) != tc.ok {
				t.Errorf("%s: Check(%+v) = %v, want ok=%v", tc.reason, tc.ref, err, tc.ok)
			}
		})
	}
	got := chk.Unready(context.Background(), []layout.ZoneRef{{Zone: "view.test", View: "ext"}, {Zone: "missing.test", View: "ext"}, {Zone: "plain.test"}})
	if diff := cmp.Diff([]layout.ZoneRef{{Zone: "missing.test", View: "ext"}}, got); diff != "" {
		t.Errorf("Unready (-want +got):\n%s", diff)
	}
	if s, err := SOASerial(context.Background(), addr, "view.test", &key, bindtools.Hang); err != nil || s != 7 {
		t.Errorf("SOASerial = %d, %v; want 7", s, err)
	}
	if err := SendNotify(context.Background(), addr, "view.test", key, bindtools.Hang); err != nil {
		t.Errorf("SendNotify: %v", err)
	}
}

func TestLoadViewKeys(t *testing.T) {
	dir := t.TempDir()
	text, err := KeyStatement(Key{Name: "xfr", Algorithm: "hmac-sha256", Secret: "c2VjcmV0"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "key.conf")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadViewKeys([]layout.ViewKey{
		{View: "ext", KeyName: "xfr", KeyFile: file},
		{View: "gone", KeyName: "xfr", KeyFile: filepath.Join(dir, "missing.conf")},
		{View: "wrong", KeyName: "other", KeyFile: file},
	})
	if err == nil {
		t.Error("LoadViewKeys: want an error for the missing file and the missing key")
	}
	want := map[string]Key{"ext": {Name: "xfr", Algorithm: "hmac-sha256", Secret: "c2VjcmV0"}}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("LoadViewKeys (-want +got):\n%s", diff)
	}
}

func TestSerialBehind(t *testing.T) {
	cases := map[string]struct {
		reason string
		a, b   uint32
		want   bool
	}{
		"Behind":  {reason: "a smaller serial is behind", a: 1, b: 2, want: true},
		"Equal":   {reason: "equal serials are not behind", a: 5, b: 5},
		"Ahead":   {reason: "a larger serial is not behind", a: 9, b: 2},
		"Wrapped": {reason: "RFC 1982: 2^32-1 is behind 1", a: 4294967295, b: 1, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := serialBehind(tc.a, tc.b); got != tc.want {
				t.Errorf("%s: serialBehind(%d, %d) = %v, want %v", tc.reason, tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// TestShows: what each zone type must show in the answer to its SOA query
// (RD=0) to be ready.
func TestShows(t *testing.T) {
	soa := &dns.SOA{Hdr: dns.RR_Header{Name: "z.test.", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60}, Ns: "ns.z.test.", Mbox: "h.z.test.", Serial: 1}
	ns := &dns.NS{Hdr: dns.RR_Header{Name: "z.test.", Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 60}, Ns: "ns.z.test."}
	rootNS := &dns.NS{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 60}, Ns: "a.root."}
	msg := func(rcode int, aa bool, answer, auth []dns.RR) *dns.Msg {
		return &dns.Msg{MsgHdr: dns.MsgHdr{Rcode: rcode, Authoritative: aa}, Answer: answer, Ns: auth}
	}
	cases := map[string]struct {
		reason string
		typ    string
		r      *dns.Msg
		ok     bool
	}{
		"PrimaryAA":          {reason: "a primary answers its SOA with AA", r: msg(dns.RcodeSuccess, true, []dns.RR{soa}, nil), ok: true},
		"PrimaryNotAA":       {reason: "a primary's SOA without AA is another server's (a cache)", r: msg(dns.RcodeSuccess, false, []dns.RR{soa}, nil)},
		"PrimaryReferral":    {reason: "a referral is not a primary's data", r: msg(dns.RcodeSuccess, false, nil, []dns.RR{ns})},
		"StubReferral":       {reason: "a loaded stub answers with a referral from its own NS (issue #36: a resolver with a stub zone was never Ready)", typ: layout.ZoneTypeStub, r: msg(dns.RcodeSuccess, false, nil, []dns.RR{ns}), ok: true},
		"StubCachedSOA":      {reason: "a stub answers the SOA from the cache after a recursive query", typ: layout.ZoneTypeStub, r: msg(dns.RcodeSuccess, false, []dns.RR{soa}, nil), ok: true},
		"StubNotLoaded":      {reason: "a stub that never loaded answers SERVFAIL", typ: layout.ZoneTypeStub, r: msg(dns.RcodeServerFailure, false, nil, nil)},
		"StubRootReferral":   {reason: "a referral to the root is not the stub's data", typ: layout.ZoneTypeStub, r: msg(dns.RcodeSuccess, false, nil, []dns.RR{rootNS})},
		"MirrorSOA":          {reason: "a mirror zone answers its SOA without AA", typ: layout.ZoneTypeMirror, r: msg(dns.RcodeSuccess, false, []dns.RR{soa}, nil), ok: true},
		"MirrorReferralOnly": {reason: "a mirror zone that shows only NS has not loaded", typ: layout.ZoneTypeMirror, r: msg(dns.RcodeSuccess, false, nil, []dns.RR{ns})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := shows(layout.ZoneRef{Zone: "z.test", Type: tc.typ}, tc.r)
			if (err == nil) != tc.ok {
				t.Errorf("%s: shows = %v, want ok=%v", tc.reason, err, tc.ok)
			}
		})
	}
	if err := (ZoneChecker{}).Check(context.Background(), layout.ZoneRef{Zone: "z.test", Type: "hint"}); err == nil {
		t.Error("a zone type readiness does not know is ready, want an error")
	}
}

// TestRealNamedStubReady: a named holding a stub zone (its primary another
// named) becomes ready under the agent, on real named: the stub never
// answers AA, and readiness asks it for its NS instead (issue #36: a
// resolver with a stub zone stayed 503 "zones not loaded"). The same zone
// with no type, asked for an authoritative SOA, is not ready.
func TestRealNamedStubReady(t *testing.T) {
	bindtools.RequireBIND(t)
	l := newLab(t)
	// The stub's primary: a plain named serving stubsrc.test.
	src := filepath.Join(l.root, "stubsrc")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	srcPort := bindtools.FreePort(t)
	zone := "$TTL 300\n@ IN SOA ns1 hostmaster 7 300 60 1209600 60\n@ IN NS ns1\nns1 IN A 127.0.0.1\nwww IN A 192.0.2.77\n"
	conf := fmt.Sprintf("options {\n\tdirectory %q;\n\tpid-file %q;\n\tlisten-on port %d { 127.0.0.1; };\n\tlisten-on-v6 { none; };\n\trecursion no;\n};\nzone \"stubsrc.test\" {\n\ttype primary;\n\tfile %q;\n};\n",
		src, filepath.Join(src, "named.pid"), srcPort, filepath.Join(src, "stubsrc.test.zone"))
	if err := os.WriteFile(filepath.Join(src, "stubsrc.test.zone"), []byte(zone), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "named.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	named := exec.Command(bindtools.Current(t).Script(t, l.root, "named"), "-g", "-c", filepath.Join(src, "named.conf"))
	named.Stdout, named.Stderr = l.logs, l.logs
	if err := named.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = named.Process.Kill(); _ = named.Wait() })

	res := &fakeResolver{}
	res.set("lab-1.lab-headless", "127.0.0.2")
	l.writeKey("upd-tsig", l.secret)
	l.writeZones(l.zoneFiles(1, "192.0.2.10"))
	extra := fmt.Sprintf("zone \"stubsrc.test\" {\n\ttype stub;\n\tfile %q;\n\tprimaries { 127.0.0.1 port %d; };\n};", filepath.Join(l.dataDir, "stubsrc.test.stub"), srcPort)
	doc := l.primaryDoc(nil)
	doc.PrimaryZones = append(doc.PrimaryZones, layout.ZoneRef{Zone: "stubsrc.test", Type: layout.ZoneTypeStub})
	l.writeConfig(l.fixture(layout.NamedConfPrimary, map[string]string{"@EXTRA@": extra}), l.fixture(layout.NamedConfSecondary, nil), doc)
	a, _ := l.run(l.options(0, res))
	waitFor(t, bindtools.Hang, "ready with the stub zone", func() bool { return a.State().Snapshot().Ready })

	chk := ZoneChecker{Addr: l.addr(), Timeout: bindtools.Hang}
	if err := chk.Check(context.Background(), layout.ZoneRef{Zone: "stubsrc.test", Type: layout.ZoneTypeStub}); err != nil {
		t.Errorf("the stub zone: %v", err)
	}
	if err := chk.Check(context.Background(), layout.ZoneRef{Zone: "stubsrc.test"}); err == nil {
		t.Error("the stub zone asked as an authoritative zone is ready, want not: a stub never answers AA")
	}
	if err := chk.Check(context.Background(), layout.ZoneRef{Zone: "static.test", Type: layout.ZoneTypeStub}); err != nil {
		t.Errorf("a loaded primary asked as a stub (its SOA answered): %v", err)
	}
}
