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
		wantWhy string // and this, in the same loss
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
			reason:  "Without BIND's reader, a dynamic zone's file without its journal lacks the updates since named last wrote it: a loss, with the commands that carry them.",
			files:   map[string]string{"/c/named.conf": "key \"k\" { algorithm hmac-sha256; secret \"YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE=\"; };\nzone \"a.example\" { type primary; file \"a.db\"; allow-update { key \"k\"; }; };\n", "/c/a.db": soa, "/c/a.db.jnl": ""},
			wantLos: "/c/named.conf:2: file \"a.db\";: zone a.example has a journal (/c/a.db.jnl)",
			wantWhy: "run `rndc sync -clean a.example` on the server first, or transfer the zone live: `bind-fn import --axfr SERVER --zone a.example`",
		},
		"JournalOfAnyZone": {
			reason:  "A journal beside a zone the import carries without updates (allow-update by address, a loss of its own) holds its records all the same: flagged too (it was not).",
			files:   map[string]string{"/c/named.conf": "zone \"a.example\" { type primary; file \"a.db\"; allow-update { 192.0.2.1; }; notify explicit; };\n", "/c/a.db": soa, "/c/a.db.jnl": ""},
			wantLos: "zone a.example has a journal (/c/a.db.jnl)",
		},
		"JournalOption": {
			reason:  "A zone's journal option names its journal: that file is the one flagged.",
			files:   map[string]string{"/c/named.conf": "zone \"a.example\" { type primary; file \"a.db\"; journal \"j/a.journal\"; notify explicit; };\n", "/c/a.db": soa, "/c/j/a.journal": ""},
			wantLos: "zone a.example has a journal (/c/j/a.journal)",
		},
		"JournalInAView": {
			reason:  "In a view, the commands name the view: rndc sync -clean ZONE IN VIEW, --zone VIEW/ZONE.",
			files:   map[string]string{"/c/named.conf": "view \"lan\" { zone \"a.example\" { type primary; file \"a.db\"; notify explicit; }; };\n", "/c/a.db": soa, "/c/a.db.jnl": ""},
			wantLos: "zone a.example has a journal (/c/a.db.jnl)",
			wantWhy: "`rndc sync -clean a.example IN lan` on the server first, or transfer the zone live: `bind-fn import --axfr SERVER --zone lan/a.example`",
		},
		"PrivateRootHints": {
			reason:  "A resolver whose hints name a private root (ISC's forward/ns4): bind-fn's built-in hints would send recursion to the real root; a loss, not 'replaced'.",
			files:   map[string]string{"/c/named.conf": "options { recursion yes; };\nzone \".\" { type hint; file \"root.db\"; };\n", "/c/root.db": ". NS a.root.test.\na.root.test. A 192.0.2.1\n"},
			wantLos: "/c/named.conf:2: zone \".\"", wantWhy: "root hints naming a.root.test., not the IANA root servers",
		},
		"FeedBeforePolicy": {
			reason:  "A feed (secondary RPZ) listed before a policy of the server's own: bind-fn lists policies first, and BIND applies the first zone that matches; a loss at the feed.",
			files:   map[string]string{"/c/named.conf": "options {\n\tresponse-policy { zone \"feed.rpz\"; zone \"local.rpz\"; };\n};\nzone \"feed.rpz\" {\n\ttype secondary;\n\tprimaries { 192.0.2.9; };\n\tnotify no;\n};\nzone \"local.rpz\" { type primary; file \"l.db\"; notify no; };\n", "/c/l.db": "$TTL 60\n@ SOA invalid. h. 1 3600 600 1209600 300\n@ NS invalid.\nbad.example CNAME .\n"},
			wantLos: "/c/named.conf:4: zone \"feed.rpz\"", wantWhy: "comes before policy zone local.rpz",
		},
		"NotifyToNSOutsideTheZone": {
			reason:  "notify yes sends NOTIFY to the NS set; an NS whose address is not in the zone cannot be resolved offline: a loss at the zone.",
			files:   map[string]string{"/c/named.conf": "zone \"a.example\" {\n\ttype primary;\n\tfile \"a.db\";\n};\n", "/c/a.db": soa + "@ NS ns2.other.example.\n"},
			wantLos: "/c/named.conf:1: zone \"a.example\" { type primary; file \"a.db\"; };: notify yes sends NOTIFY to NS ns2.other.example.",
		},
		"SecondaryNotifies": {
			reason:  "A secondary zone under BIND's default (notify yes) NOTIFYs its NS set; bind-fn's secondaries do not.",
			files:   map[string]string{"/c/named.conf": "zone \"b.example\" {\n\ttype secondary;\n\tprimaries { 192.0.2.9; };\n};\n"},
			wantLos: "/c/named.conf:1: zone \"b.example\"", wantWhy: "a secondary zone that sends NOTIFY to its NS set",
		},
		"SecondaryAlsoNotify": {
			reason:  "A secondary zone's also-notify (notify explicit) is not sent by bind-fn's secondaries: a loss, not silence.",
			files:   map[string]string{"/c/named.conf": "zone \"b.example\" {\n\ttype secondary;\n\tprimaries { 192.0.2.9; };\n\tnotify explicit;\n\talso-notify { 192.0.2.10; };\n};\n"},
			wantLos: "/c/named.conf:4: notify explicit;", wantWhy: "a secondary zone that NOTIFYs its also-notify list (192.0.2.10)",
		},
		"CatalogMemberProperty": {
			reason: "A catalog member's properties (RFC 9432 group) are not written by bind-fn's catalog: a loss naming the record.",
			files: map[string]string{"/c/named.conf": "zone \"cat.invalid\" { type primary; file \"cat.db\"; };\nzone \"a.example\" { type primary; file \"a.db\"; notify explicit; };\n", "/c/a.db": soa,
				"/c/cat.db": "$TTL 60\n@ SOA invalid. h. 1 3600 600 1209600 300\n@ NS invalid.\nversion TXT \"2\"\nm1.zones PTR a.example.\ngroup.m1.zones TXT \"blue\"\n"},
			wantLos: "/c/cat.db:1: group.m1.zones.cat.invalid.\t60\tIN\tTXT\t\"blue\": a catalog member property",
		},
		"DynamicZoneRecords": {
			reason:  "An imported dynamic zone's records would become agent-owned, and the agent would undo later UPDATEs: a loss at the file statement.",
			files:   map[string]string{"/c/named.conf": "key \"k\" { algorithm hmac-sha256; secret \"YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE=\"; };\nzone \"a.example\" {\n\ttype primary;\n\tfile \"a.db\";\n\tnotify explicit;\n\tallow-update { key \"k\"; };\n};\n", "/c/a.db": soa + "host1 A 192.0.2.1\n"},
			wantLos: "/c/named.conf:4: file \"a.db\";: the 1 existing RRsets of dynamic zone a.example become BindZone spec.records",
		},
		"BadDuration": {
			reason:  "A duration BIND refuses is a loss at its line, not an exit after \"lossless\".",
			files:   map[string]string{"/c/named.conf": "dnssec-policy p {\n\tdnskey-ttl 5x;\n};\n"},
			wantLos: "/c/named.conf:2: dnskey-ttl 5x;: cannot use \"5x\" as a duration",
		},
		"DNSSECKeysUnreadable": {
			reason:  "A signed zone whose keys cannot be read would be signed with new keys no DS matches: a loss.",
			files:   map[string]string{"/c/named.conf": "dnssec-policy p { keys { csk lifetime unlimited algorithm 13; }; };\nzone \"a.example\" {\n\ttype primary;\n\tfile \"a.db\";\n\tnotify explicit;\n\tdnssec-policy p;\n};\n", "/c/a.db": soa},
			wantLos: "/c/named.conf:6: dnssec-policy p;: the DNSSEC keys of zone a.example are not read",
		},
		"SignedSerialUnread": {
			reason:  "A signed zone serves its signed version's serial, above the file's; when it cannot be read the render may start below the secondaries' serial: a loss.",
			files:   map[string]string{"/c/named.conf": "dnssec-policy p { keys { csk lifetime unlimited algorithm 13; }; };\nzone \"a.example\" {\n\ttype primary;\n\tfile \"a.db\";\n\tnotify explicit;\n\tdnssec-policy p;\n};\n", "/c/a.db": soa},
			wantLos: "/c/named.conf:4: file \"a.db\";: the signed serial of zone a.example is not read",
		},
		"GenerateWithoutBIND": {
			reason:  "Without BIND's reader, a $GENERATE line (miekg/dns gives it TTL 3600 where BIND gives $TTL) is a loss at its line.",
			files:   map[string]string{"/c/named.conf": "zone \"a.example\" { type primary; file \"a.db\"; notify explicit; };\n", "/c/a.db": soa + "$GENERATE 1-2 h$ A 192.0.2.$\n"},
			wantLos: "/c/a.db:4: $GENERATE 1-2 h$ A 192.0.2.$: read by miekg/dns",
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
			found := false
			for _, l := range all {
				found = found || (strings.Contains(l, tc.wantLos) && strings.Contains(l, tc.wantWhy))
			}
			if !found {
				t.Errorf("%s\nno loss contains %q and %q:\n%s", tc.reason, tc.wantLos, tc.wantWhy, strings.Join(all, "\n"))
			}
		})
	}
}
