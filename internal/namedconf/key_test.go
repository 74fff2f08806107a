package namedconf

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseKeys(t *testing.T) {
	cases := map[string]struct {
		reason, in string
		want       []KeyStmt
		wantErr    bool
	}{
		"rndc.key": {reason: "the file rndc-confgen writes", in: "key \"rndc-key\" {\n\talgorithm hmac-sha256;\n\tsecret \"c2VjcmV0\";\n};\n",
			want: []KeyStmt{{Name: "rndc-key", Algorithm: "hmac-sha256", Secret: "c2VjcmV0"}}},
		"comments": {reason: "all three comment forms, and another statement", in: "# a\n// b\n/* c */ options { directory \"/x\"; };\nkey k { algorithm HMAC-SHA512; secret \"eA==\"; };",
			want: []KeyStmt{{Name: "k", Algorithm: "hmac-sha512", Secret: "eA=="}}},
		"no algorithm": {reason: "the caller applies the default", in: `key "k" { secret "eA=="; };`, want: []KeyStmt{{Name: "k", Secret: "eA=="}}},
		"not a block":  {reason: "key without a body", in: `key "k";`, wantErr: true},
		"unclosed":     {reason: "a syntax error from the lexer", in: `key "k" { secret "eA==";`, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseKeys(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s: error %v, want error %v", tc.reason, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
