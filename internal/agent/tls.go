package agent

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// tlsDir is where the spec.tls Secret is mounted, beside the keys mount
// (so tests that move KeysDir move it too), as dnssecDir is.
func (a *Agent) tlsDir() string {
	return filepath.Join(filepath.Dir(a.opt.KeysDir), filepath.Base(layout.TLSDir))
}

// checkTLS runs CheckTLS on the mount before named reads it (at start and
// before every reconfig, prepare.go) and keeps the verdict for readiness:
// a pod whose certificate named cannot use, or clients must refuse, is not
// ready. named keeps the certificate it loaded last (the reconfig is not
// run), so a bad rotation never takes DoT and DoH down on a running pod.
func (a *Agent) checkTLS(cfg *layout.AgentConfigDoc) error {
	var err error
	if cfg.TLS != nil {
		err = CheckTLS(a.tlsDir(), cfg.TLS, time.Now())
	}
	a.mu.Lock()
	a.tlsErr = ""
	if err != nil {
		a.tlsErr = err.Error()
	}
	a.mu.Unlock()
	return err
}

// tlsProblem is the last checkTLS failure ("" when none).
func (a *Agent) tlsProblem() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tlsErr
}

// CheckTLS checks a kubernetes.io/tls Secret's files in dir: tls.crt and
// tls.key are there, the key is the certificate's, the certificate is
// valid at now and, with c.RequireCA, ca.crt is there and the certificate
// chains to it (strict transfers: the secondaries verify the primary's
// certificate with their ca.crt, which is the same issuer's). Every error
// names the Secret, the file and what to do.
func CheckTLS(dir string, c *layout.TLSCheck, now time.Time) error {
	where := fmt.Sprintf("TLS Secret %q (mounted at %s)", c.Secret, dir)
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s has no %s: give the Secret the keys tls.crt and tls.key (cert-manager's format)", where, name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read %s: %w", where, name, err)
		}
		return b, nil
	}
	certPEM, err := read(layout.TLSCertFile)
	if err != nil {
		return err
	}
	keyPEM, err := read(layout.TLSKeyFile)
	if err != nil {
		return err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("%s: tls.crt and tls.key cannot be used together: %v; put the certificate and its own private key in the Secret", where, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Errorf("%s: tls.crt: %v", where, err)
	}
	id := fmt.Sprintf("certificate %q (serial %s)", leaf.Subject.String(), leaf.SerialNumber.Text(16))
	switch {
	case now.After(leaf.NotAfter):
		return fmt.Errorf("%s: the %s expired at %s; renew it (with cert-manager: kubectl describe certificate)", where, id, leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return fmt.Errorf("%s: the %s is not valid before %s; check the issuer's clock", where, id, leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	if !c.RequireCA {
		return nil
	}
	caPEM, err := read(layout.TLSCAFile)
	if err != nil {
		return fmt.Errorf("%w (strict transfers verify the primary's certificate with ca.crt)", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("%s: ca.crt holds no PEM certificate", where)
	}
	inter := x509.NewCertPool()
	for _, der := range pair.Certificate[1:] {
		if ic, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(ic)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return fmt.Errorf("%s: the %s does not chain to ca.crt: %v; strict transfers would fail: issue both from one CA", where, id, err)
	}
	return nil
}
