package agent

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

type testCert struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func mkCert(t *testing.T, cn string, from, to time.Time, parent *testCert) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: from, NotAfter: to, DNSNames: []string{cn},
		IsCA: parent == nil, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	signer, signKey := tmpl, key
	if parent != nil {
		signer, signKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &testCert{cert: c, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func keyPEM(t *testing.T, c *testCert) []byte {
	b, err := x509.MarshalECPrivateKey(c.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: b})
}

func TestCheckTLS(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	ca := mkCert(t, "ca", now.Add(-time.Hour), now.Add(24*time.Hour), nil)
	other := mkCert(t, "other-ca", now.Add(-time.Hour), now.Add(24*time.Hour), nil)
	good := mkCert(t, "dns.example.com", now.Add(-time.Hour), now.Add(time.Hour), ca)
	expired := mkCert(t, "dns.example.com", now.Add(-2*time.Hour), now.Add(-time.Hour), ca)
	future := mkCert(t, "dns.example.com", now.Add(time.Hour), now.Add(2*time.Hour), ca)
	cases := map[string]struct {
		reason    string
		files     map[string][]byte
		requireCA bool
		want      string // fragment of the error; "" for none
	}{
		"good":            {reason: "a certificate, its key and its CA", files: map[string][]byte{"tls.crt": good.pem, "tls.key": keyPEM(t, good), "ca.crt": ca.pem}, requireCA: true},
		"no-ca-needed":    {reason: "without strict transfers ca.crt is optional", files: map[string][]byte{"tls.crt": good.pem, "tls.key": keyPEM(t, good)}},
		"no-key":          {reason: "a Secret without tls.key", files: map[string][]byte{"tls.crt": good.pem}, want: `has no tls.key`},
		"mismatch":        {reason: "the key of another certificate", files: map[string][]byte{"tls.crt": good.pem, "tls.key": keyPEM(t, expired)}, want: "cannot be used together"},
		"expired":         {reason: "a certificate past its NotAfter", files: map[string][]byte{"tls.crt": expired.pem, "tls.key": keyPEM(t, expired)}, want: "expired at"},
		"not-yet":         {reason: "a certificate before its NotBefore", files: map[string][]byte{"tls.crt": future.pem, "tls.key": keyPEM(t, future)}, want: "not valid before"},
		"strict-no-ca":    {reason: "strict transfers without ca.crt", files: map[string][]byte{"tls.crt": good.pem, "tls.key": keyPEM(t, good)}, requireCA: true, want: "has no ca.crt"},
		"strict-wrong-ca": {reason: "ca.crt of another issuer", files: map[string][]byte{"tls.crt": good.pem, "tls.key": keyPEM(t, good), "ca.crt": other.pem}, requireCA: true, want: "does not chain to ca.crt"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, b := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := CheckTLS(dir, &layout.TLSCheck{Secret: "dns-tls", RequireCA: tc.requireCA}, now)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s: unexpected error %v", tc.reason, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s: error %v, want one with %q", tc.reason, err, tc.want)
			case err != nil && !strings.Contains(err.Error(), `"dns-tls"`):
				t.Errorf("%s: error %v does not name the Secret", tc.reason, err)
			}
		})
	}
}
