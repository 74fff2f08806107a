package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// TestImportedKeyStatement: the key statement of a key Secret made outside
// the render (External Secrets, SOPS) comes from its mount through the
// typed writer; what BIND would refuse, or what would load a key the
// config does not use, is an error that names the problem and never the
// material.
func TestImportedKeyStatement(t *testing.T) {
	const b64 = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I="
	k := layout.ImportedKey{KeyName: "auth-xfr", Algorithm: "hmac-sha256", Secret: "auth-xfr-tsig"}
	cases := map[string]struct {
		reason  string
		files   map[string][]byte
		key     layout.ImportedKey
		want    string
		wantErr string
	}{
		"SecretOnly": {
			reason: "secret alone: name and algorithm from the config",
			files:  map[string][]byte{"secret": []byte(b64 + "\n")},
			key:    k,
			want:   "key \"auth-xfr\" {\n\talgorithm hmac-sha256;\n\tsecret \"" + b64 + "\";\n};\n",
		},
		"AllKeys": {
			reason: "the rendered Secret's format: algorithm from the Secret, keyName equal but for case and the dot",
			files:  map[string][]byte{"secret": []byte(b64), "algorithm": []byte("HMAC-SHA512\n"), "keyName": []byte("Auth-Xfr.")},
			key:    k,
			want:   "key \"auth-xfr\" {\n\talgorithm hmac-sha512;\n\tsecret \"" + b64 + "\";\n};\n",
		},
		"NoSecret": {
			reason:  "a Secret without the data key secret",
			files:   map[string][]byte{"key": []byte(b64)},
			key:     k,
			wantErr: `needs a data key "secret"`,
		},
		"NotBase64": {
			reason:  "material that is not base64 (a whole key statement pasted, say)",
			files:   map[string][]byte{"secret": []byte(`key "x" { secret "abc"; };`)},
			key:     k,
			wantErr: "not valid base64",
		},
		"BadAlgorithm": {
			reason:  "an algorithm BIND does not know",
			files:   map[string][]byte{"secret": []byte(b64), "algorithm": []byte("hmac-sha3")},
			key:     k,
			wantErr: `"hmac-sha3" is not a TSIG algorithm`,
		},
		"HostileAlgorithm": {
			reason:  "an algorithm that would close the statement",
			files:   map[string][]byte{"secret": []byte(b64), "algorithm": []byte("hmac-sha256; }; include \"/etc/shadow")},
			key:     k,
			wantErr: "is not a TSIG algorithm",
		},
		"OtherKeyName": {
			reason:  "a keyName the config does not use",
			files:   map[string][]byte{"secret": []byte(b64), "keyName": []byte("other")},
			key:     k,
			wantErr: `keyName "other" is not the key "auth-xfr"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.key.Secret)
			if err := kubeletdir.Write(dir, tc.files); err != nil {
				t.Fatal(err)
			}
			got, err := importedKeyStatement(dir, tc.key)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: error %v, want one with %q", tc.reason, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), b64) {
					t.Errorf("%s: the error holds the key material: %v", tc.reason, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
