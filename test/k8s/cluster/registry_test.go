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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

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

// pushTarball pushes an image tarball (hack/image, hack/bind-image.sh) to
// ref, as `docker push` would, and returns the digest the registry serves.
func pushTarball(tar, ref string) (v1.Hash, error) {
	img, err := tarball.ImageFromPath(tar, nil)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%s: %v", tar, err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.Write(r, img, remote.WithTransport(reg.tr)); err != nil {
		return v1.Hash{}, fmt.Errorf("push %s: %v", ref, err)
	}
	d, err := remote.Head(r, remote.WithTransport(reg.tr))
	if err != nil {
		return v1.Hash{}, fmt.Errorf("registry HEAD %s: %v", ref, err)
	}
	return d.Digest, nil
}

// podImages are the images of the BIND pods, pushed to the registry: each
// named repository:tag@sha256:digest, the way a release names them
// (docs/release.md), and by tag (the render's defaults).
type podImages struct {
	agent, bind       string // by digest
	agentTag, bindTag string
}

var pushed struct {
	once sync.Once
	imgs podImages
	err  error
}

// pushedImages builds the agent and BIND images once per run, as `make
// images` does (hack/image, hack/bind-image.sh: BIND 9.20 from Debian
// trixie's packages, the root every real-BIND test runs), and pushes them to
// the registry under the tags the render names by default. The kubelet pulls
// them from there (containerd, hosts.toml trusting the run's CA): no image of
// the BIND pods is imported into containerd.
func pushedImages(t *testing.T) podImages {
	t.Helper()
	startRegistry(t)
	pushed.once.Do(func() { pushed.imgs, pushed.err = pushPodImages() })
	if pushed.err != nil {
		t.Fatal(pushed.err)
	}
	return pushed.imgs
}

func pushPodImages() (podImages, error) {
	imgDir := filepath.Join(dir, "images")
	agentTar, bindTar := filepath.Join(imgDir, "agent.tar"), filepath.Join(imgDir, "bind.tar")
	im := podImages{agentTag: repo + "/bind-fn-agent:v0.1.0"}
	if err := agentImage(agentTar, im.agentTag); err != nil {
		return im, err
	}
	var err error
	if im.bindTag, err = bindImage(bindTar); err != nil {
		return im, err
	}
	for _, p := range []struct {
		tar, tag string
		out      *string
	}{{agentTar, im.agentTag, &im.agent}, {bindTar, im.bindTag, &im.bind}} {
		d, err := pushTarball(p.tar, p.tag)
		if err != nil {
			return im, err
		}
		*p.out = p.tag + "@" + d.String()
	}
	return im, nil
}

// registryRequests are the lines of the registry's log (one per request:
// method and URL) that contain s.
func registryRequests(t *testing.T, s string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
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

// renderedImages are the images of a rendered StatefulSet's containers and
// init containers, by container name.
func renderedImages(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var sts appsv1.StatefulSet
	if err := yaml.Unmarshal(b, &sts); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := map[string]string{}
	for _, c := range append(sts.Spec.Template.Spec.InitContainers, sts.Spec.Template.Spec.Containers...) {
		out[c.Name] = c.Image
	}
	return out
}

// byDigest maps each container of the BIND pods to the image it must run,
// pinned by digest.
func (im podImages) byDigest() map[string]string {
	return map[string]string{"named": im.bind, "install-agent": im.agent}
}

// manifestGets counts the registry's GETs of ref's manifest by its digest
// (ref is repository:tag@sha256:...), the request containerd makes to pull it.
func manifestGets(t *testing.T, ref string) int {
	t.Helper()
	repoTag, digest, _ := strings.Cut(ref, "@")
	repo := strings.TrimPrefix(repoTag[:strings.LastIndex(repoTag, ":")], registryHost+"/")
	n := 0
	for _, l := range registryRequests(t, "/v2/"+repo+"/manifests/"+digest) {
		if strings.Contains(l, " GET /v2/") && !strings.Contains(l, " 404 ") {
			n++
		}
	}
	return n
}

// containerdImages are the names containerd's CRI namespace gives its
// images (a pull by digest is named repository@sha256:...).
func containerdImages(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("ctr", "-a", sock, "-n", "k8s.io", "images", "ls", "-q").CombinedOutput()
	if err != nil {
		t.Fatalf("ctr images ls: %v: %s", err, out)
	}
	return strings.Fields(string(out))
}

// pulledByDigest checks that every BIND pod runs the images the render
// pinned: its containers name them by digest, containerd reports the
// digests it runs, and holds each image under its digest name, which only a
// pull by digest gives it (an imported tarball or a pull by tag is named by
// tag); and that containerd asked the registry for each manifest by digest
// since gets0 (manifestGets before the pods were created).
func pulledByDigest(t *testing.T, pods []corev1.Pod, im podImages, gets0 map[string]int) {
	t.Helper()
	want := im.byDigest()
	for _, p := range pods {
		statuses := append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...)
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			ref, ok := want[c.Name]
			if !ok {
				continue
			}
			if c.Image != ref {
				t.Errorf("%s/%s: image %q, want %q", p.Name, c.Name, c.Image, ref)
			}
			digest := ref[strings.Index(ref, "@"):]
			for _, s := range statuses {
				if s.Name == c.Name && !strings.HasSuffix(s.ImageID, digest) {
					t.Errorf("%s/%s runs %s, want the digest %s", p.Name, c.Name, s.ImageID, digest[1:])
				}
			}
		}
	}
	have := map[string]bool{}
	for _, n := range containerdImages(t) {
		have[n] = true
	}
	for _, ref := range want {
		repoTag, digest, _ := strings.Cut(ref, "@")
		name := repoTag[:strings.LastIndex(repoTag, ":")] + "@" + digest
		if !have[name] {
			t.Errorf("containerd holds no image named %s: the kubelet did not pull %s by digest", name, ref)
		}
		if n := manifestGets(t, ref); n <= gets0[ref] {
			t.Errorf("the registry served no GET of %s's manifest by digest while the pods started (%d before, %d after)", ref, gets0[ref], n)
		}
	}
}
