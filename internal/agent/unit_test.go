package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

func TestOrdinal(t *testing.T) {
	cases := map[string]struct {
		reason  string
		host    string
		want    int
		wantErr bool
	}{
		"Primary":      {reason: "ordinal 0 is the primary", host: "dns-0", want: 0},
		"Dashes":       {reason: "only the last dash counts", host: "my-dns-cluster-12", want: 12},
		"NoDash":       {reason: "a hostname without an ordinal is an error", host: "dns", wantErr: true},
		"TrailingDash": {reason: "an empty ordinal is an error", host: "dns-", wantErr: true},
		"NotNumber":    {reason: "a non-numeric suffix is an error", host: "dns-abc", wantErr: true},
		"Sign":         {reason: "a sign is not an ordinal", host: "dns-+1", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Ordinal(tc.host)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s: Ordinal(%q) error = %v, wantErr %v", tc.reason, tc.host, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("%s: Ordinal(%q) = %d, want %d", tc.reason, tc.host, got, tc.want)
			}
		})
	}
	if RoleOf(0) != RolePrimary || RoleOf(3) != RoleSecondary {
		t.Error("RoleOf: ordinal 0 must be primary, others secondary")
	}
}

func TestParseConfig(t *testing.T) {
	base := `"primaryConf":"/p","secondaryConf":"/s"`
	cases := map[string]struct {
		reason  string
		doc     string
		wantErr string
	}{
		"Minimal":       {reason: "the two config paths are enough", doc: `{` + base + `}`},
		"Full":          {reason: "every field decodes", doc: `{` + base + `,"serverLists":[{"name":"l","role":"secondary","hosts":["a.b"],"key":"k","port":5353}],"importedKeys":[{"keyName":"k","algorithm":"hmac-sha512","secret":"s","include":"/i"}],"seedZones":[{"zone":"z","source":"/a","dest":"/b"}],"dynamicZones":[{"zone":"z","keyName":"k","keyFile":"/k","records":["a 1 IN A 192.0.2.1"]}],"primaryZones":[{"zone":"z"}],"secondaryZones":[{"zone":"z","view":"v"}],"resolveIntervalSeconds":5,"metricsPort":9119}`},
		"UnknownField":  {reason: "an unknown field means the agent is older than its renderer", doc: `{` + base + `,"surprise":1}`, wantErr: `unknown field "surprise"`},
		"NoPrimaryConf": {reason: "the primary config path is required", doc: `{"secondaryConf":"/s"}`, wantErr: "primaryConf: must be set"},
		"BadRole":       {reason: "a list's role is primary or secondary", doc: `{` + base + `,"serverLists":[{"name":"l","role":"both"}]}`, wantErr: "serverLists[0].role"},
		"DuplicateList": {reason: "list names are unique", doc: `{` + base + `,"serverLists":[{"name":"l","role":"primary"},{"name":"l","role":"primary"}]}`, wantErr: "duplicate list"},
		"QuoteInName":   {reason: "a name that could close a named.conf string is refused", doc: `{` + base + `,"serverLists":[{"name":"l\"; };","role":"primary"}]}`, wantErr: "serverLists[0].name"},
		"BadAlgorithm":  {reason: "imported keys need an algorithm BIND knows", doc: `{` + base + `,"importedKeys":[{"keyName":"k","algorithm":"rot13","secret":"s"}]}`, wantErr: "importedKeys[0].algorithm"},
		"SecretPath":    {reason: "a Secret name cannot escape the keys directory", doc: `{` + base + `,"importedKeys":[{"keyName":"k","secret":"../x"}]}`, wantErr: "importedKeys[0].secret"},
		"Trailing":      {reason: "one document only", doc: `{` + base + `} {}`, wantErr: "trailing data"},
		"NotJSON":       {reason: "garbage is a clear error", doc: `primaryConf: /p`, wantErr: "cannot parse agent config"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseConfig("agent.json", []byte(tc.doc))
			if tc.wantErr == "" && err != nil {
				t.Fatalf("%s: unexpected error %v", tc.reason, err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("%s: error = %v, want one containing %q", tc.reason, err, tc.wantErr)
			}
		})
	}
}

func TestMissingPeersSkipsACLOnly(t *testing.T) {
	lists := []layout.ServerList{
		{Name: "bind-fn-primary", Role: "secondary", Hosts: []string{"auth-primary"}},
		{Name: layout.PrimaryPodList, Role: "secondary", Hosts: []string{"auth-0.auth-headless"}, ACLOnly: true},
	}
	resolved := []Peers{{Name: "bind-fn-primary", IPs: []net.IP{net.ParseIP("10.96.0.10")}}, {Name: layout.PrimaryPodList, ACLOnly: true}}
	// A secondary starts once its primaries resolve; the primary pod's own
	// name may resolve later (it only widens the NOTIFY ACL).
	if got := MissingPeers(RoleSecondary, lists, resolved); len(got) != 0 {
		t.Errorf("MissingPeers = %v, want none: an ACL-only list never holds a secondary back", got)
	}
	if got := MissingPeers(RoleSecondary, lists, resolved[1:]); !cmp.Equal(got, []string{"bind-fn-primary"}) {
		t.Errorf("MissingPeers = %v, want [bind-fn-primary]", got)
	}
}

func TestKeys(t *testing.T) {
	secret := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))
	cases := map[string]struct {
		reason  string
		key     Key
		wantErr string
	}{
		"Default":   {reason: "hmac-sha256 is the default algorithm", key: Key{Name: "xfr", Secret: secret}},
		"Sha512":    {reason: "algorithms are lower-cased", key: Key{Name: "upd.example.", Algorithm: "HMAC-SHA512", Secret: secret}},
		"BadBase64": {reason: "material is validated before it reaches named", key: Key{Name: "k", Secret: "not base64!"}, wantErr: "not valid base64"},
		"Empty":     {reason: "empty material is refused", key: Key{Name: "k"}, wantErr: "not valid base64"},
		"BadAlg":    {reason: "unknown algorithms are refused", key: Key{Name: "k", Algorithm: "md4", Secret: secret}, wantErr: "not a TSIG algorithm"},
		"BadName":   {reason: "names cannot break out of the string", key: Key{Name: `k" {`, Secret: secret}, wantErr: "key name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			text, err := KeyStatement(tc.key)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: error = %v, want %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			got, err := FindKey("# comment\n"+text, tc.key.Name)
			if err != nil {
				t.Fatalf("%s: cannot parse back %q: %v", tc.reason, text, err)
			}
			want := tc.key
			want.Algorithm = strings.ToLower(want.Algorithm)
			if want.Algorithm == "" {
				want.Algorithm = DefaultAlgorithm
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: round trip (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestParseKeys(t *testing.T) {
	text := `/* rndc-confgen style */
key "rndc-key" {
	algorithm hmac-md5; // old
	secret "c2VjcmV0";
};
options { default-key "rndc-key"; };
key other { secret "b3RoZXI="; };
`
	got, err := ParseKeys(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Key{{Name: "rndc-key", Algorithm: "hmac-md5", Secret: "c2VjcmV0"}, {Name: "other", Algorithm: DefaultAlgorithm, Secret: "b3RoZXI="}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseKeys (-want +got):\n%s", diff)
	}
	if _, err := FindKey(text, "missing"); err == nil {
		t.Error("FindKey of a missing key: want error")
	}
	if _, err := ParseKeys(`key "k" { secret "abc`); err == nil {
		t.Error("unterminated string: want error")
	}
}

func TestParseCheckOutput(t *testing.T) {
	cases := map[string]struct {
		reason string
		out    string
		want   CheckError
	}{
		"Option": {reason: "syntax errors carry file:line", out: "/etc/bind-fn/config/named.conf.primary:12: unknown option 'foo'\n",
			want: CheckError{File: "/etc/bind-fn/config/named.conf.primary", Line: 12, Message: "unknown option 'foo'"}},
		"Zone": {reason: "zone file errors from -z carry the zone file's line", out: "/etc/bind-fn/zones/0/a.zone:5: unknown RR type 'BOGUS'\nzone a.test/IN: loading from master file /etc/bind-fn/zones/0/a.zone failed: unknown class/type\n",
			want: CheckError{File: "/etc/bind-fn/zones/0/a.zone", Line: 5, Message: "unknown RR type 'BOGUS'"}},
		"Relative": {reason: "relative file names are located too", out: "n.conf:4: zone 'b.test': empty 'primaries' entry\n",
			want: CheckError{File: "n.conf", Line: 4, Message: "zone 'b.test': empty 'primaries' entry"}},
		"Unlocated": {reason: "without a location the whole output is the message", out: "something odd\n",
			want: CheckError{Message: "something odd"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := *ParseCheckOutput(tc.out)
			got.Output = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDesiredRRsets(t *testing.T) {
	cases := map[string]struct {
		reason  string
		records []string
		want    []string // RRset keys
		wantErr string
	}{
		"Relative": {reason: "names are relative to the zone; RRsets group by name and type",
			records: []string{"www 60 IN A 192.0.2.1", "WWW.example.org. 60 IN A 192.0.2.2", "@ 60 IN MX 10 mx"},
			want:    []string{"example.org. MX", "www.example.org. A"}},
		"ApexNS": {reason: "the apex NS belongs to BindZone.spec.nameservers",
			records: []string{"@ 60 IN NS ns1.example.org.", "sub 60 IN NS ns1.example.org."},
			want:    []string{"sub.example.org. NS"}, wantErr: "apex NS"},
		"SOA":     {reason: "the SOA is never updated", records: []string{"@ 60 IN SOA a. b. 1 2 3 4 5"}, wantErr: "SOA"},
		"Outside": {reason: "names outside the zone are refused", records: []string{"www.example.com. 60 IN A 192.0.2.1"}, wantErr: "outside zone"},
		"Syntax":  {reason: "bad presentation format is an error", records: []string{"www 60 IN A not-an-ip"}, wantErr: "bad A"},
		"Escaped": {reason: "owners in the form an AXFR gives them: `\\$` unescaped, an escaped blank as `\\ ` (agent differential seed 10019: the RRset sent was never found)",
			records: []string{`\$dollar 60 IN TXT "x"`, `sp\032ace 60 IN A 192.0.2.1`},
			want:    []string{"$dollar.example.org. TXT", `sp\ ace.example.org. A`}},
		"IPSECKEY": {reason: "a record after an IPSECKEY parses (miekg/dns reads one token past an IPSECKEY's line; agent differential seed 10001)",
			records: []string{"a 60 IN IPSECKEY 10 1 2 192.0.2.38 DQJlMzy/i1pDTyJGGt+ztgsPap7eNr6R7ZNmqnDXBNg=", "b 60 IN A 192.0.2.1"},
			want:    []string{"a.example.org. IPSECKEY", "b.example.org. A"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DesiredRRsets("Example.org", tc.records)
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("%s: error = %v, want %q", tc.reason, err, tc.wantErr)
			}
			var keys []string
			for k := range got {
				keys = append(keys, k.String())
				if back, err := parseRRsetKey(k.String()); err != nil || back != k {
					t.Errorf("the state file's key %q reads back as %v, %v", k, back, err)
				}
			}
			if diff := cmp.Diff(tc.want, keys, sortStrings); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

var sortStrings = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestSameRRset(t *testing.T) {
	rrs := func(lines ...string) []dns.RR {
		var out []dns.RR
		for _, l := range lines {
			rr, err := dns.NewRR(l)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rr)
		}
		return out
	}
	cases := map[string]struct {
		reason    string
		cur, want []dns.RR
		same      bool
	}{
		"OwnerCase": {reason: "owner case must not matter",
			cur: rrs("www.example.org. 60 IN A 192.0.2.1"), want: rrs("WWW.example.org. 60 IN A 192.0.2.1"), same: true},
		"TTL": {reason: "a TTL change is a change",
			cur: rrs("www.example.org. 60 IN A 192.0.2.1"), want: rrs("www.example.org. 61 IN A 192.0.2.1")},
		"Absent":     {reason: "absent vs present is a change", want: rrs("www.example.org. 60 IN A 192.0.2.1")},
		"BothAbsent": {reason: "nothing desired, nothing held", same: true},
		"Rdata": {reason: "other rdata is a change",
			cur: rrs("www.example.org. 60 IN A 192.0.2.1"), want: rrs("www.example.org. 60 IN A 192.0.2.2")},
		"Order": {reason: "RRs are a set: order does not matter",
			cur: rrs("w. 60 IN A 192.0.2.2", "w. 60 IN A 192.0.2.1"), want: rrs("w. 60 IN A 192.0.2.1", "w. 60 IN A 192.0.2.2"), same: true},
		"Duplicate": {reason: "a duplicate RR is one RR to BIND",
			cur: rrs("w. 60 IN A 192.0.2.1"), want: rrs("w. 60 IN A 192.0.2.1", "w. 60 IN A 192.0.2.1"), same: true},
		"HexCase": {reason: "generic rdata in upper-case hex is the bytes BIND returns in lower case",
			cur: rrs(`g. 60 IN TYPE65280 \# 2 abcd`), want: rrs(`g. 60 IN TYPE65280 \# 2 ABCD`), same: true},
		"SSHFPHex": {reason: "an SSHFP fingerprint's hex case does not matter",
			cur: rrs("h. 60 IN SSHFP 1 1 abcdef01"), want: rrs("h. 60 IN SSHFP 1 1 ABCDEF01"), same: true},
		"TargetCase": {reason: "names in rdata compare without case",
			cur: rrs("a. 60 IN CNAME target.example.org."), want: rrs("a. 60 IN CNAME Target.EXAMPLE.org."), same: true},
		"TXTCase": {reason: "TXT data keeps its case",
			cur: rrs(`t. 60 IN TXT "abc"`), want: rrs(`t. 60 IN TXT "ABC"`)},
		"TXTSpacing": {reason: "the spacing between strings is not data",
			cur: rrs(`t. 60 IN TXT "a" "b"`), want: rrs(`t. 60 IN TXT "a"    "b"`), same: true},
		"V6Zeros": {reason: "an IPv6 address written long is the same address",
			cur: rrs("v. 60 IN AAAA 2001:db8::1"), want: rrs("v. 60 IN AAAA 2001:DB8:0:0:0:0:0:1"), same: true},
		"MixedTTL": {reason: "BIND keeps one TTL per RRset: desired RRs with two TTLs compare by rdata",
			cur: rrs("m. 600 IN A 192.0.2.1", "m. 600 IN A 192.0.2.2"), want: rrs("m. 300 IN A 192.0.2.1", "m. 600 IN A 192.0.2.2"), same: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := sameRRset(tc.cur, tc.want); got != tc.same {
				t.Errorf("%s: sameRRset = %v, want %v", tc.reason, got, tc.same)
			}
		})
	}
}

func TestPeerResolver(t *testing.T) {
	res := &fakeResolver{}
	res.set("p", "10.0.0.1", "fd00::1")
	lists := []layout.ServerList{
		{Name: "bind-fn-primary", Role: "secondary", Hosts: []string{"p"}, Key: "k"},
		{Name: "bind-fn-secondaries", Role: "primary", Hosts: []string{"s1"}, Key: "k"},
	}
	pr := &PeerResolver{Resolver: res}
	ips := func(ps []Peers) map[string][]string {
		out := map[string][]string{}
		for _, p := range ps {
			out[p.Name] = []string{}
			for _, ip := range p.IPs {
				out[p.Name] = append(out[p.Name], ip.String())
			}
		}
		return out
	}
	got := ips(pr.Resolve(context.Background(), RoleSecondary, lists))
	want := map[string][]string{"bind-fn-primary": {"10.0.0.1", "fd00::1"}, "bind-fn-secondaries": {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a secondary resolves only its own lists (-want +got):\n%s", diff)
	}
	res.mu.Lock()
	delete(res.hosts, "p")
	res.mu.Unlock()
	got = ips(pr.Resolve(context.Background(), RoleSecondary, lists))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a failed lookup keeps the last addresses (-want +got):\n%s", diff)
	}
	if pr.Errors["p"] == nil {
		t.Error("the failed lookup is recorded")
	}
	fresh := &PeerResolver{Resolver: res}
	if m := MissingPeers(RoleSecondary, lists, fresh.Resolve(context.Background(), RoleSecondary, lists)); !cmp.Equal(m, []string{"bind-fn-primary"}) {
		t.Errorf("MissingPeers = %v, want [bind-fn-primary]", m)
	}
}

func TestTreeHashFollowsKubeletSwap(t *testing.T) {
	l := newLab(t)
	l.writeKey("k", "c2VjcmV0")
	h1, err := TreeHash(l.keysDir)
	if err != nil {
		t.Fatal(err)
	}
	l.writeKey("k", "c2VjcmV0")
	h2, _ := TreeHash(l.keysDir)
	if h1 != h2 {
		t.Error("a swap to identical content must not change the hash")
	}
	l.writeKey("k", "b3RoZXI=")
	h3, _ := TreeHash(l.keysDir)
	if h3 == h1 {
		t.Error("a swap to new content must change the hash")
	}
	if h, err := TreeHash(filepath.Join(l.root, "missing")); err != nil || h == "" {
		t.Errorf("a missing root hashes as empty, got %q, %v", h, err)
	}
}

func TestSeedFile(t *testing.T) {
	dir := t.TempDir()
	src, dest := filepath.Join(dir, "src.zone"), filepath.Join(dir, "data", "sub", "dest.zone")
	os.WriteFile(src, []byte("one"), 0o644)
	var owned []string
	chown := func(p string) error { owned = append(owned, filepath.Base(p)); return nil }
	if copied, err := SeedFile(src, dest, chown); err != nil || !copied {
		t.Fatalf("first seed: copied=%v err=%v", copied, err)
	}
	if len(owned) != 3 { // data, sub and the file
		t.Errorf("chowned %v, want the created directories and the file", owned)
	}
	os.WriteFile(src, []byte("two"), 0o644)
	if copied, err := SeedFile(src, dest, nil); err != nil || copied {
		t.Fatalf("second seed: copied=%v err=%v, want no copy", copied, err)
	}
	if b, _ := os.ReadFile(dest); string(b) != "one" {
		t.Errorf("a seeded file is never overwritten, got %q", b)
	}
	if _, err := SeedFile(filepath.Join(dir, "nope"), filepath.Join(dir, "x"), nil); err == nil {
		t.Error("a missing source is an error")
	}
}

func TestStateEndpoints(t *testing.T) {
	s := NewState(RolePrimary, 0)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		r, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	s.Update(func(st *Status) { st.Unready = []string{"a.test"} })
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "a.test") {
		t.Errorf("/readyz while unready = %d %q", code, body)
	}
	s.Update(func(st *Status) { st.Ready, st.Unready = true, nil })
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz when ready = %d", code)
	}
	s.Update(func(st *Status) { st.HiddenPrimary = true })
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "hidden primary") {
		t.Errorf("/readyz on a hidden primary = %d %q", code, body)
	}
	s.Metrics().Reloads.WithLabelValues(kindReconfig).Add(2)
	_, body := get("/metrics")
	for _, want := range []string{
		"# TYPE bindfn_agent_reloads_total counter",
		`bindfn_agent_reloads_total{kind="reconfig"} 2`,
		`bindfn_agent_reload_failures_total{stage="checkconf"} 0`,
		"bindfn_agent_named_up 0",
		"bindfn_agent_peer_changes_total 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if _, body := get("/status"); !strings.Contains(body, `"role": "primary"`) || !strings.Contains(body, `"version": "dev"`) {
		t.Errorf("/status lacks the role or the build's version (dev in a test binary) = %s", body)
	}
}

func TestMainExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "agent.json")
	os.WriteFile(good, []byte(`{"primaryConf":"/p","secondaryConf":"/s"}`), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"primaryConf":"/p"`), 0o644)
	env := func(string) string { return "" }
	cases := map[string]struct {
		reason string
		args   []string
		want   int
		output string
	}{
		"NoArgs":        {reason: "usage without a command", args: nil, want: 2, output: "Usage"},
		"Unknown":       {reason: "an unknown command", args: []string{"serve"}, want: 2, output: `unknown command "serve"`},
		"BadFlag":       {reason: "an unknown flag", args: []string{"run", "--nope"}, want: 2, output: "flag provided but not defined"},
		"MissingConfig": {reason: "a missing agent.json", args: []string{"run", "--hostname", "d-0", "--config", filepath.Join(dir, "none.json")}, want: 2, output: "cannot read agent config"},
		"InvalidConfig": {reason: "an invalid agent.json", args: []string{"run", "--hostname", "d-0", "--config", bad}, want: 2, output: "cannot parse agent config"},
		"NoOrdinal":     {reason: "a hostname without an ordinal", args: []string{"run", "--hostname", "dns", "--config", good}, want: 2, output: "ordinal"},
		"NoHostname":    {reason: "no hostname at all", args: []string{"run", "--config", good}, want: 2, output: "no hostname"},
		"MissingNamed":  {reason: "a named binary that does not exist", args: []string{"run", "--hostname", "d-0", "--config", good, "--named", filepath.Join(dir, "named")}, want: 2, output: "cannot find"},
		"BadInterval":   {reason: "intervals must be positive", args: []string{"run", "--hostname", "d-0", "--config", good, "--poll-interval", "0s"}, want: 2, output: "--poll-interval"},
		"CopySelfArgs":  {reason: "copy-self needs DEST", args: []string{"copy-self"}, want: 2, output: "usage"},
		"Help":          {reason: "help is not an error", args: []string{"run", "-h"}, want: 0, output: "-resolve-interval"},
		"DrainNoAgent":  {reason: "drain without an agent behind the socket fails the hook, saying where it asked", args: []string{"drain", "--control-socket", filepath.Join(dir, "none.sock")}, want: 1, output: "cannot reach the agent on " + filepath.Join(dir, "none.sock")},
		"DrainArgs":     {reason: "drain takes no arguments", args: []string{"drain", "now"}, want: 2, output: "unexpected arguments"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			got := Main(context.Background(), tc.args, env, &out)
			if got != tc.want || !strings.Contains(out.String(), tc.output) {
				t.Errorf("%s: Main(%q) = %d, want %d with output containing %q; output:\n%s", tc.reason, tc.args, got, tc.want, tc.output, out.String())
			}
		})
	}
}

func TestCopySelf(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.WriteFile(src, []byte("binary"), 0o644)
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	if err := CopySelf(src, bin); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(bin, "bind-fn-agent"))
	if err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Fatalf("copy into a directory: %v, mode %v", err, fi)
	}
	if err := CopySelf(filepath.Join(dir, "missing"), bin); err == nil {
		t.Error("a missing source is an error")
	}
}

// TestRunOnce prepares a pod's files without BIND (checkconf is /bin/true).
func TestRunOnce(t *testing.T) {
	l := newLab(t)
	res := &fakeResolver{}
	res.set("lab-1.lab-headless", "10.0.0.2", "10.0.0.1")
	l.writeKey("upd-tsig", l.secret)
	l.writeZones(l.zoneFiles(1, "192.0.2.10"))
	l.writeConfig([]byte("# primary\n"), []byte("# secondary\n"), l.primaryDoc(nil))
	o := l.options(0, res)
	o.Once = true
	o.NamedCheckconf = "true"
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Run(context.Background()); err != nil {
		t.Fatalf("Run --once: %v", err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(filepath.Join(l.runDir, layout.ActiveConf)); got != "# primary\n" {
		t.Errorf("active config = %q, want the primary's", got)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "once-servers.conf"), []byte(read(filepath.Join(l.runDir, layout.ServersInclude))))
	if k, err := FindKey(read(filepath.Join(l.runDir, "keys", "upd-tsig.conf")), "upd"); err != nil || k.Secret != l.secret {
		t.Errorf("imported key include: %+v, %v", k, err)
	}
	if k, err := FindKey(read(filepath.Join(l.runDir, layout.RNDCKeyFile)), layout.RNDCKeyName); err != nil || k.Algorithm != "hmac-sha256" {
		t.Errorf("generated rndc key: %+v, %v", k, err)
	}
	if !strings.Contains(read(filepath.Join(l.runDir, "rndc.conf")), "default-key \"bind-fn-rndc\"") {
		t.Error("rndc.conf does not name the rndc key")
	}
	if got := read(filepath.Join(l.dataDir, "dyn.test.zone")); !strings.Contains(got, "SOA") {
		t.Error("dynamic zone not seeded")
	}

	// A secondary that cannot resolve its primary gives up with a clear error.
	o.Ordinal, o.PrimaryWait = 1, 300e6
	a, err = New(o)
	if err != nil {
		t.Fatal(err)
	}
	err = a.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "bind-fn-primary") || errors.As(err, new(*UsageError)) {
		t.Errorf("secondary without primary: err = %v, want a runtime error naming the list", err)
	}
}

// TestTSIGHashes: the agent signs with every TSIG algorithm BIND accepts.
func TestTSIGHashes(t *testing.T) {
	for _, a := range vocab.TSIG {
		if tsigHashes[a.Name] == nil {
			t.Errorf("no hash for %s: a key BIND takes the agent could not use", a.Name)
		}
	}
	if len(tsigHashes) != len(vocab.TSIG) {
		t.Errorf("%d hashes for %d algorithms", len(tsigHashes), len(vocab.TSIG))
	}
}

// TestAddZoneDocs: agent.json's per-zone lists come from the shards'
// agent-zones.json it lists (docs/state.md#shards), appended in order; an
// unreadable, unknown or invalid shard document is an error naming it.
func TestAddZoneDocs(t *testing.T) {
	files := map[string]string{
		"/z/0/agent-zones.json": `{"primaryZones":[{"zone":"a","view":"v"}],"seedZones":[{"zone":"a","source":"/z/0/db.a","dest":"/d/db.a"}]}`,
		"/z/1/agent-zones.json": `{"primaryZones":[{"zone":"b"}],"dnssecZones":["b"],"dynamicZones":[{"zone":"b","keyName":"k","keyFile":"/k","source":"/z/1/db.b"}]}`,
		"/z/2/agent-zones.json": `{"surprise":1}`,
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	cases := map[string]struct {
		reason  string
		docs    []string
		want    []layout.ZoneRef
		wantErr string
	}{
		"Two":     {reason: "both shards' zones, in shard order", docs: []string{"/z/0/agent-zones.json", "/z/1/agent-zones.json"}, want: []layout.ZoneRef{{Zone: "a", View: "v"}, {Zone: "b"}}},
		"Missing": {reason: "a shard not laid yet is an error: the agent retries", docs: []string{"/z/9/agent-zones.json"}, wantErr: "zoneDocs[0]: cannot read"},
		"Unknown": {reason: "an unknown field means the agent is older than its renderer", docs: []string{"/z/2/agent-zones.json"}, wantErr: `unknown field "surprise"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &layout.AgentConfigDoc{PrimaryConf: "/p", SecondaryConf: "/s", ZoneDocs: tc.docs}
			err := AddZoneDocs(c, read)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: error = %v, want one containing %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, c.PrimaryZones); diff != "" {
				t.Errorf("%s: primaryZones (-want +got):\n%s", tc.reason, diff)
			}
			if len(c.SeedZones) != 1 || len(c.DynamicZones) != 1 || len(c.DNSSECZones) != 1 {
				t.Errorf("%s: %d seeds, %d dynamic, %d signed zones; want 1 each", tc.reason, len(c.SeedZones), len(c.DynamicZones), len(c.DNSSECZones))
			}
		})
	}
}
