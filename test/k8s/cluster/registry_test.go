//go:build cluster

package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
)

// registryHost is the registry every bind-fn image and package names
// (model.DefaultImage, package/, the Makefile's IMAGE_REPO). Inside this
// test's namespaces it is the node's address, where an OCI registry
// (go-containerregistry's pkg/registry, in this process) serves TLS with a
// certificate of a CA made for the run; nothing leaves the namespace.
const registryHost = "git.unkin.net"

var reg struct {
	once   sync.Once
	err    error
	caFile string
	caPEM  []byte
	tr     http.RoundTripper
}

// registryHostsDir is containerd's registry configuration directory
// (config_path of the CRI plugin): one hosts.toml per registry.
func registryHostsDir() string { return filepath.Join(dir, "containerd", "certs.d") }

// startRegistry starts the registry once: the listener on the node's
// address, port 443; /etc/hosts (this test's mount namespace) resolving
// registryHost to it, for the crossplane CLI, containerd and the registry
// client here; and containerd's hosts.toml trusting the CA.
func startRegistry(t *testing.T) {
	t.Helper()
	reg.once.Do(func() { reg.err = serveRegistry() })
	if reg.err != nil {
		t.Fatalf("registry: %v", reg.err)
	}
}

func serveRegistry() error {
	d := filepath.Join(dir, "registry")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	ca, err := controlplane.NewCA("bind-fn-registry-ca")
	if err != nil {
		return err
	}
	pair, err := ca.Issue(registryHost, nil, []net.IP{net.ParseIP(nodeIP)}, []string{registryHost})
	if err != nil {
		return err
	}
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		return err
	}
	reg.caFile, reg.caPEM = filepath.Join(d, "ca.crt"), ca.CertPEM
	if err := os.WriteFile(reg.caFile, ca.CertPEM, 0o644); err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	reg.tr = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}

	l, err := tls.Listen("tcp", net.JoinHostPort(nodeIP, "443"), &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(logf, "", log.LstdFlags)))}
	go func() { _ = srv.Serve(l) }()

	// The name resolves to the node here only: a copy of /etc/hosts with
	// one more line, bound over it in this mount namespace.
	hosts, err := os.ReadFile("/etc/hosts")
	if err != nil {
		return err
	}
	own := filepath.Join(d, "hosts")
	if err := os.WriteFile(own, append(hosts, []byte("\n"+nodeIP+" "+registryHost+"\n")...), 0o644); err != nil {
		return err
	}
	if err := sh("mount", "--bind", own, "/etc/hosts"); err != nil {
		return err
	}
	// containerd (CRI config_path): pull from the registry, trusting the CA.
	hd := filepath.Join(registryHostsDir(), registryHost)
	if err := os.MkdirAll(hd, 0o755); err != nil {
		return err
	}
	toml := fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %q\n",
		"https://"+registryHost, "https://"+registryHost, reg.caFile)
	return os.WriteFile(filepath.Join(hd, "hosts.toml"), []byte(toml), 0o644)
}

// pushImage pushes an image tarball (hack/image, hack/bind-image.sh) to
// ref, as `docker push` would, and returns its digest.
func pushImage(t *testing.T, tar, ref string) v1.Hash {
	t.Helper()
	img, err := tarball.ImageFromPath(tar, nil)
	if err != nil {
		t.Fatalf("%s: %v", tar, err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img, remote.WithTransport(reg.tr)); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return digestOf(t, ref)
}

// digestOf is the digest the registry serves for ref.
func digestOf(t *testing.T, ref string) v1.Hash {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r, remote.WithTransport(reg.tr))
	if err != nil {
		t.Fatalf("registry HEAD %s: %v", ref, err)
	}
	return d.Digest
}

// xpkgPush pushes a Crossplane package with the crossplane CLI, as a user
// does (`crossplane xpkg push -f FILE REF`), trusting the registry's CA
// (SSL_CERT_FILE), and returns the digest the registry then serves.
func xpkgPush(t *testing.T, file, ref string) v1.Hash {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "crossplane"), "xpkg", "push", "-f", file, ref)
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+reg.caFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("crossplane xpkg push -f %s %s: %v\n%s", file, ref, err, out)
	}
	d := digestOf(t, ref)
	t.Logf("crossplane xpkg push %s: %s", strings.TrimPrefix(ref, registryHost+"/"), d)
	return d
}
