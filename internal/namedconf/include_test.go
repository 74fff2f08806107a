package namedconf

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadConf(t *testing.T) {
	cases := map[string]struct {
		reason  string
		files   map[string]string
		want    []string // "file:line name" of every statement, depth first
		wantErr string
	}{
		"Includes": {
			reason: "An include is replaced by the included file's statements, at any depth, each keeping its own file and line; relative paths resolve against the base.",
			files: map[string]string{
				"/etc/named.conf": "include \"keys.conf\";\nview \"v\" {\n\tinclude \"/etc/v.conf\";\n};\n",
				"/etc/keys.conf":  "\nkey \"k\" { secret \"x\"; };\n",
				"/etc/v.conf":     "zone \"z\" { type primary; };\n",
			},
			want: []string{"/etc/keys.conf:2 key", "/etc/keys.conf:2 secret", "/etc/named.conf:2 view", "/etc/v.conf:1 zone", "/etc/v.conf:1 type"},
		},
		"Cycle": {
			reason:  "A file that includes itself is an error, not a loop.",
			files:   map[string]string{"/etc/named.conf": "include \"named.conf\";\n"},
			wantErr: "included from itself",
		},
		"SyntaxErrorLocated": {
			reason:  "A syntax error names the file and line of the included file.",
			files:   map[string]string{"/etc/named.conf": "options { };\ninclude \"bad.conf\";\n", "/etc/bad.conf": "\n\nzone \"x\" {\n"},
			wantErr: "/etc/named.conf:2: /etc/bad.conf:line 4",
		},
		"Missing": {
			reason:  "A missing include is an error naming the including line.",
			files:   map[string]string{"/etc/named.conf": "include \"nope.conf\";\n"},
			wantErr: "/etc/named.conf:1: no file /etc/nope.conf",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			read := func(p string) ([]byte, error) {
				if s, ok := tc.files[p]; ok {
					return []byte(s), nil
				}
				return nil, fmt.Errorf("no file %s", p)
			}
			got, err := ReadConf("/etc/named.conf", "/etc", read)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nerror %v, want one containing %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			var walk func([]Located)
			walk = func(ls []Located) {
				for _, l := range ls {
					lines = append(lines, l.Where()+" "+l.Name())
					walk(l.Body)
				}
			}
			walk(got)
			if d := cmp.Diff(tc.want, lines); d != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, d)
			}
		})
	}
}
