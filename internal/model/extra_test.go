package model

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// extraCases are shared with TestExtraOptionsBIND, which renders every
// accepted case and asks named-checkconf.
var extraCases = map[string]struct {
	reason string
	in     []string
	// want is the rendered statements, or the error fragment.
	want    string
	wantErr string
}{
	"plain":            {reason: "one option per entry without ';'", in: []string{"minimal-responses yes"}, want: "minimal-responses yes;\n"},
	"trailing hash":    {reason: "a trailing # comment must not swallow the ';' bind-fn adds", in: []string{"minimal-responses yes # keep answers small"}, want: "minimal-responses yes;\n"},
	"trailing slashes": {reason: "a trailing // comment likewise", in: []string{"max-cache-size 64m // cache"}, want: "max-cache-size 64m;\n"},
	"with semicolon":   {reason: "an entry may end in ';' and a comment", in: []string{"minimal-any yes; # small"}, want: "minimal-any yes;\n"},
	"two statements":   {reason: "several statements in one entry, sorted by name", in: []string{"minimal-responses no; max-cache-ttl 3600;"}, want: "max-cache-ttl 3600;\nminimal-responses no;\n"},
	"list option":      {reason: "a list option is left to BIND's grammar", in: []string{"blackhole { 192.0.2.0/24; }"}, want: "blackhole {\n\t192.0.2.0/24;\n};\n"},
	"iso duration":     {reason: "durations in either form BIND reads", in: []string{"max-cache-ttl PT1H", "lame-ttl 10m"}, want: "lame-ttl 10m;\nmax-cache-ttl PT1H;\n"},
	"misspelt":         {reason: "named: unknown option 'minimal-response'", in: []string{"minimal-response yes"}, wantErr: `BIND has no such option`},
	"deprecated":       {reason: "deprecated in 9.18, removed in 9.20", in: []string{"glue-cache yes"}, wantErr: `BIND has no such option`},
	"owned":            {reason: "bind-fn renders allow-transfer itself", in: []string{"allow-transfer { any; }"}, wantErr: `cannot set "allow-transfer"`},
	"bool shape":       {reason: "named: boolean expected", in: []string{"minimal-any maybe"}, wantErr: `is not a boolean`},
	"number shape":     {reason: "named: expected number", in: []string{"tcp-listen-queue ten"}, wantErr: `is not a number`},
	"no value":         {reason: "named: expected number near ';' (differential extra-option-missing-value)", in: []string{"edns-udp-size"}, wantErr: `has no value`},
	"list no value":    {reason: "a list option without its list", in: []string{"blackhole"}, wantErr: `has no value`},
	"two values":       {reason: "a one-value option with two", in: []string{"minimal-any yes no"}, wantErr: `exactly one value`},
	"string shape":     {reason: "named: expected quoted string", in: []string{"server-id none2"}, wantErr: `takes a quoted string`},
	"duration shape":   {reason: "named: expected ISO 8601 duration or TTL value", in: []string{"max-cache-ttl P1H"}, wantErr: `is not a duration`},
	"size shape":       {reason: "named: expected integer and optional unit", in: []string{"max-cache-size 64q"}, wantErr: `is not a size`},
	"twice":            {reason: "one option in two entries", in: []string{"minimal-any yes", "minimal-any no"}, wantErr: `already set by spec.extraOptions[0]`},
	"string closes":    {reason: "a string holding ; { } is a statement closed from inside", in: []string{`server-id "a; }; include /etc/passwd"`}, wantErr: `holds ; { or }`},
	"unparsable":       {reason: "a '}' with no open block", in: []string{"max-cache-size 64m; }; options {"}, wantErr: `cannot parse`},
}

func TestParseExtraOptions(t *testing.T) {
	for name, tc := range extraCases {
		t.Run(name, func(t *testing.T) {
			var rs diag.Results
			stmts := ParseExtraOptions(diag.Source{}, tc.in, &rs)
			if tc.wantErr != "" {
				if !rs.HasErrors() || !strings.Contains(rs[0].Message, tc.wantErr) {
					t.Fatalf("%s: got %v, want an error with %q", tc.reason, rs, tc.wantErr)
				}
				return
			}
			if len(rs) > 0 {
				t.Fatalf("%s: unexpected %v", tc.reason, rs)
			}
			got, err := nc.Format(stmts...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
