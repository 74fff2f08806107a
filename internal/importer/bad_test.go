package importer_test

import (
	"fmt"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestBadInput: what a real server's files can get wrong is a located
// error or a located loss, never a panic and never silence.
func TestBadInput(t *testing.T) {
	const soa = "$TTL 60\n@ SOA ns. h. 1 3600 600 1209600 300\n@ NS ns.\n"
	cases := map[string]struct {
		reason  string
		files   map[string]string
		wantErr string // from reading named.conf
		wantLos string // a loss containing this
	}{
		"SyntaxError": {
			reason:  "A named.conf BIND would refuse names its line.",
			files:   map[string]string{"/c/named.conf": "options {\n\trecursion no\n};\n"},
			wantErr: "/c/named.conf:line 3",
		},
		"MissingZoneFile": {
			reason:  "A zone whose file is missing is listed with the file statement's line.",
			files:   map[string]string{"/c/named.conf": "zone \"a.example\" {\n\ttype primary;\n\tfile \"a.db\";\n};\n"},
			wantLos: "/c/named.conf:3: file \"a.db\";: cannot read the zone file",
		},
		"BadZoneFile": {
			reason:  "A zone file miekg/dns cannot read is listed with the parser's own file:line.",
			files:   map[string]string{"/c/named.conf": "zone \"a.example\" { type primary; file \"a.db\"; };\n", "/c/a.db": soa + "www IN A 300.1.1.1\n"},
			wantLos: "a.db",
		},
		"UndefinedKey": {
			reason:  "A key no statement defines cannot be carried (BIND would refuse it too).",
			files:   map[string]string{"/c/named.conf": "zone \"a.example\" { type primary; file \"a.db\"; allow-update { key \"nokey\"; }; };\n", "/c/a.db": soa},
			wantLos: "key \"nokey\" is not defined",
		},
		"Journal": {
			reason:  "A dynamic zone's file without its journal lacks the updates since the last rndc sync: flagged.",
			files:   map[string]string{"/c/named.conf": "key \"k\" { algorithm hmac-sha256; secret \"YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE=\"; };\nzone \"a.example\" { type primary; file \"a.db\"; allow-update { key \"k\"; }; };\n", "/c/a.db": soa, "/c/a.db.jnl": ""},
			wantLos: "the zone has a journal (/c/a.db.jnl)",
		},
		"HostileNames": {
			reason:  "Names that could close a statement stay data: bind-fn refuses them with the object and field, nothing is pasted.",
			wantLos: "BindACL dns/a------zone--evil (acls.yaml) spec.aclName: cannot use",
			files:   map[string]string{"/c/named.conf": "acl \"a\\\"; }; zone \\\"evil\" { any; };\nzone \"a.example\" { type primary; file \"a.db\"; allow-query { \"a\\\"; }; zone \\\"evil\"; }; };\n", "/c/a.db": soa},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			read := func(p string) ([]byte, error) {
				if s, ok := tc.files[p]; ok {
					return []byte(s), nil
				}
				return nil, fmt.Errorf("open %s: no such file", p)
			}
			conf, err := namedconf.ReadConf("/c/named.conf", "/c", read)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nerror %v, want %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := importer.Import(conf, importer.Options{ZoneDir: "/c", Read: read, Exists: func(p string) bool { _, ok := tc.files[p]; return ok }})
			if err != nil {
				t.Fatal(err)
			}
			rs, err := res.Check(&testutil.DetRand{})
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, l := range res.Losses {
				all = append(all, l.String())
			}
			for _, r := range rs {
				all = append(all, r.String())
			}
			if tc.wantLos == "" {
				if rs.HasErrors() {
					t.Errorf("%s\nthe import does not render: %v", tc.reason, rs)
				}
				return
			}
			if !strings.Contains(strings.Join(all, "\n"), tc.wantLos) {
				t.Errorf("%s\nno loss contains %q:\n%s", tc.reason, tc.wantLos, strings.Join(all, "\n"))
			}
		})
	}
}
