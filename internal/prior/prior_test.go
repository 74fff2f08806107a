package prior

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// material is n bytes of a fixed pattern, a stand-in for crypto/rand.
func material(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

func TestNewKeyMaterial(t *testing.T) {
	cases := map[string]struct {
		reason  string
		alg     string
		r       func() *bytes.Reader
		want    int
		wantErr string
	}{
		"MD5":     {reason: "128 bits", alg: "hmac-md5", want: 16},
		"SHA1":    {reason: "160 bits", alg: "hmac-sha1", want: 20},
		"SHA224":  {reason: "224 bits", alg: "hmac-sha224", want: 28},
		"SHA256":  {reason: "256 bits", alg: "hmac-sha256", want: 32},
		"SHA384":  {reason: "384 bits", alg: "hmac-sha384", want: 48},
		"SHA512":  {reason: "512 bits", alg: "HMAC-SHA512", want: 64},
		"Unknown": {reason: "unknown algorithm", alg: "hmac-sha3", wantErr: `unknown algorithm "hmac-sha3"`},
		"Short":   {reason: "a reader that runs dry is an error, not a short key", alg: "hmac-sha256", r: func() *bytes.Reader { return bytes.NewReader(make([]byte, 10)) }, wantErr: "unexpected EOF"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := bytes.NewReader(material(100))
			if tc.r != nil {
				r = tc.r()
			}
			got, err := newKeyMaterial(r, tc.alg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: err %v, want %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if diff := cmp.Diff(material(100)[:tc.want], got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
	if _, err := newKeyMaterial(iotest.ErrReader(errors.New("boom")), "hmac-sha256"); err == nil {
		t.Error("reader error not returned")
	}
}
