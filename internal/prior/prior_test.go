package prior

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
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

// TestReadEarlierRelease: a package an earlier release rendered (zone files
// with tabs and no hash comment, every zone's state in the zone-state
// annotation) keeps its serials: a live zone's from its file, a zone
// removed before the upgrade from the annotation.
func TestReadEarlierRelease(t *testing.T) {
	src := func(name string) diag.Source {
		return diag.Source{Ref: diag.ObjectRef{Kind: "ConfigMap", Namespace: "dns", Name: name}}
	}
	objs := []Object{
		{Src: src("tiny-config"), Kind: "ConfigMap", Annotations: map[string]string{
			layout.ZoneStateAnnotation: `{"a.example":{"Serial":4,"Hash":"old"},"gone.example":{"Serial":9,"Hash":"h"}}`,
		}},
		{Src: src("tiny-zones-0"), Kind: "ConfigMap", Data: map[string][]byte{
			"db.a.example": []byte("$ORIGIN a.example.\n$TTL 60\na.example.\t60\tIN\tSOA\tns. h. 5 300 60 1209600 60\na.example.\t60\tIN\tNS\tns.\n"),
		}},
	}
	p, rs := Read(objs)
	if len(rs) > 0 {
		t.Fatal(rs)
	}
	c := &model.Cluster{Namespace: "dns", Name: "tiny"}
	got := map[string]uint32{}
	for f, z := range p.ZoneStates(c) {
		got[f] = z.Serial
	}
	if d := cmp.Diff(map[string]uint32{"db.a.example": 5, "db.gone.example": 9}, got); d != "" {
		t.Errorf("serials by file (-want +got):\n%s", d)
	}
	if st, ok := p.ZoneState(c, "", "gone.example."); !ok || st.Serial != 9 {
		t.Errorf("the removed zone's state: %+v, %v", st, ok)
	}
}
