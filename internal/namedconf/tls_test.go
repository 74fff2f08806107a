package namedconf

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTLSWriters(t *testing.T) {
	cases := map[string]struct {
		reason  string
		stmt    Stmt
		want    string
		wantErr string
	}{
		"server": {
			reason: "a server block: certificate and key",
			stmt:   TLSBlock{Name: "srv", CertFile: "/c/tls.crt", KeyFile: "/c/tls.key"}.Stmt(),
			want:   "tls \"srv\" {\n\tcert-file \"/c/tls.crt\";\n\tkey-file \"/c/tls.key\";\n};\n",
		},
		"strict-client": {
			reason: "a client block: BIND's strict TLS",
			stmt:   TLSBlock{Name: "xot", CAFile: "/c/ca.crt", RemoteHostname: "p.example", Protocols: []string{"TLSv1.3"}}.Stmt(),
			want:   "tls \"xot\" {\n\tca-file \"/c/ca.crt\";\n\tremote-hostname \"p.example\";\n\tprotocols { TLSv1.3; };\n};\n",
		},
		"reserved": {
			reason:  "ephemeral is BIND's own",
			stmt:    TLSBlock{Name: TLSEphemeral}.Stmt(),
			wantErr: "reserved",
		},
		"hostile-path": {
			reason:  "a file name cannot close the string",
			stmt:    TLSBlock{Name: "x", CertFile: "a\"; }; controls { \\"}.Stmt(),
			wantErr: "backslash",
		},
		"http": {
			reason: "the DoH endpoints",
			stmt:   HTTPBlock{Name: "doh", Endpoints: []string{"/dns-query"}}.Stmt(),
			want:   "http \"doh\" {\n\tendpoints { \"/dns-query\"; };\n};\n",
		},
		"dot": {
			reason: "a DoT listener",
			stmt:   Listener{Port: 853, TLS: "srv", Match: []Stmt{S(Kw("any"))}}.Stmt(),
			want:   "listen-on port 853 tls \"srv\" { any; };\n",
		},
		"doh-v6": {
			reason: "a DoH listener on IPv6",
			stmt:   Listener{V6: true, Port: 443, TLS: "srv", HTTP: "doh", Match: []Stmt{S(Kw("any"))}}.Stmt(),
			want:   "listen-on-v6 port 443 tls \"srv\" http \"doh\" { any; };\n",
		},
		"plain-http": {
			reason:  "unencrypted DoH is never rendered",
			stmt:    Listener{Port: 80, HTTP: "doh", Match: []Stmt{S(Kw("any"))}}.Stmt(),
			wantErr: "without tls",
		},
		"entry-tls": {
			reason: "a primaries entry reached over TLS",
			stmt:   ServerEntry{Addr: netip.MustParseAddr("192.0.2.1"), Port: 853, Key: "xfr", TLS: "xot"}.Stmt(),
			want:   "192.0.2.1 port 853 key \"xfr\" tls \"xot\";\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := Format(tc.stmt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: error %v, want one with %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, string(b)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
