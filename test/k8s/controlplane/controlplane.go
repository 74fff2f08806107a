// Package controlplane starts a real Kubernetes control plane for tests:
// etcd and kube-apiserver (built by hack/install-k8s.sh into bin/), in the
// network namespace of the calling process — which InPrivateNetwork makes a
// fresh one with only loopback — and tears it down.
package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// NetnsEnv marks a process already re-executed in its own network namespace.
const NetnsEnv = "BINDFN_K8S_NETNS"

// InPrivateNetwork re-executes the current binary (a test binary) in a new
// network namespace with only loopback up, unless it already runs in one.
// It returns reexeced=true and the child's exit code in the parent; the
// caller exits with it. Inside, it returns reexeced=false.
//
// extra are more unshare(1) flags (e.g. --mount --propagation private).
func InPrivateNetwork(extra ...string) (reexeced bool, code int, err error) {
	if os.Getenv(NetnsEnv) == "1" {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			return false, 0, fmt.Errorf("ip link set lo up: %v: %s", err, out)
		}
		return false, 0, nil
	}
	if os.Geteuid() != 0 {
		return false, 0, errors.New("needs root (a private network namespace); set BINDFN_SKIP_ROOT=1 to skip")
	}
	args := append(append([]string{"--net"}, extra...), "--", os.Args[0])
	cmd := exec.Command("unshare", append(args, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), NetnsEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return true, ee.ExitCode(), nil
	}
	if err != nil {
		return true, 1, err
	}
	return true, 0, nil
}

// Options of a control plane.
type Options struct {
	// Bin holds etcd and kube-apiserver.
	Bin string
	// Dir receives data, certificates, kubeconfig and logs.
	Dir string
	// ExtraAPIServerArgs are appended to kube-apiserver's.
	ExtraAPIServerArgs []string
	// AdvertiseAddress of the API server (default 127.0.0.1, which also turns
	// off the endpoint reconciler: Endpoints may not hold a loopback address).
	AdvertiseAddress string
}

// ControlPlane is a running etcd + kube-apiserver.
type ControlPlane struct {
	Opts       Options
	CA         *CA
	Admin      Pair
	Kubeconfig string
	Host       string
	// Started: how long etcd + kube-apiserver took to be ready.
	Started time.Duration
	procs   []*Process
}

// Start runs etcd and kube-apiserver and waits until /readyz is ok.
func Start(ctx context.Context, o Options) (*ControlPlane, error) {
	t0 := time.Now()
	if o.AdvertiseAddress == "" {
		o.AdvertiseAddress = "127.0.0.1"
	}
	cp := &ControlPlane{Opts: o, Host: "https://127.0.0.1:6443"}
	pki := filepath.Join(o.Dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return nil, err
	}
	ca, err := NewCA("bind-fn-test-ca")
	if err != nil {
		return nil, err
	}
	cp.CA = ca
	srv, err := ca.Issue("kube-apiserver", nil,
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(o.AdvertiseAddress), net.ParseIP("10.96.0.1")},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
	if err != nil {
		return nil, err
	}
	if cp.Admin, err = ca.Issue("admin", []string{"system:masters"}, nil, nil); err != nil {
		return nil, err
	}
	files := map[string][]byte{"ca.crt": ca.CertPEM, "apiserver.crt": srv.CertPEM, "apiserver.key": srv.KeyPEM,
		"admin.crt": cp.Admin.CertPEM, "admin.key": cp.Admin.KeyPEM}
	for n, d := range files {
		if err := os.WriteFile(filepath.Join(pki, n), d, 0o600); err != nil {
			return nil, err
		}
	}
	saPub, saKey, err := serviceAccountKey(pki)
	if err != nil {
		return nil, err
	}
	cp.Kubeconfig = filepath.Join(o.Dir, "kubeconfig")
	if err := os.WriteFile(cp.Kubeconfig, cp.kubeconfig(), 0o600); err != nil {
		return nil, err
	}

	etcd, err := StartProcess(o.Dir, "etcd", filepath.Join(o.Bin, "etcd"),
		"--name=etcd", "--data-dir="+filepath.Join(o.Dir, "etcd"),
		"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=etcd=http://127.0.0.1:2380", "--unsafe-no-fsync", "--log-level=warn")
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, etcd)

	// Loopback only, unless pods must reach the API server (through the
	// kubernetes Service to the advertised address).
	bind := "127.0.0.1"
	if o.AdvertiseAddress != "127.0.0.1" {
		bind = "0.0.0.0"
	}
	args := []string{
		"--etcd-servers=http://127.0.0.1:2379",
		"--bind-address=" + bind, "--secure-port=6443", "--advertise-address=" + o.AdvertiseAddress,
		"--tls-cert-file=" + filepath.Join(pki, "apiserver.crt"), "--tls-private-key-file=" + filepath.Join(pki, "apiserver.key"),
		"--client-ca-file=" + filepath.Join(pki, "ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub, "--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.96.0.0/12",
		"--authorization-mode=Node,RBAC",
		"--cert-dir=" + filepath.Join(o.Dir, "apiserver-certs"),
		"--profiling=false",
	}
	if o.AdvertiseAddress == "127.0.0.1" {
		args = append(args, "--endpoint-reconciler-type=none")
	}
	args = append(args, o.ExtraAPIServerArgs...)
	api, err := StartProcess(o.Dir, "kube-apiserver", filepath.Join(o.Bin, "kube-apiserver"), args...)
	if err != nil {
		cp.Stop()
		return nil, err
	}
	cp.procs = append(cp.procs, api)
	if err := cp.waitReady(ctx, api); err != nil {
		cp.Stop()
		return nil, err
	}
	cp.Started = time.Since(t0)
	return cp, nil
}

func (cp *ControlPlane) waitReady(ctx context.Context, api *Process) error {
	pool := x509.NewCertPool()
	pool.AddCert(cp.CA.Cert)
	cert, err := tls.X509KeyPair(cp.Admin.CertPEM, cp.Admin.KeyPEM)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}}
	deadline := time.Now().Add(Hang)
	var last string
	for time.Now().Before(deadline) {
		if api.Exited() {
			return fmt.Errorf("kube-apiserver exited: %s", api.Tail(30))
		}
		rsp, err := hc.Get(cp.Host + "/readyz")
		if err == nil {
			rsp.Body.Close()
			if rsp.StatusCode == http.StatusOK {
				return nil
			}
			last = rsp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("kube-apiserver not ready after 90 s (%s): %s", last, api.Tail(30))
}

// RestConfig is an admin client config; warnings go to the handler.
func (cp *ControlPlane) RestConfig(warnings rest.WarningHandler) *rest.Config {
	return &rest.Config{
		Host: cp.Host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: cp.CA.CertPEM, CertData: cp.Admin.CertPEM, KeyData: cp.Admin.KeyPEM,
		},
		QPS: 200, Burst: 400,
		WarningHandler: warnings,
	}
}

func (cp *ControlPlane) kubeconfig() []byte {
	ind := func(b []byte) string {
		return strings.TrimSpace(b64(b))
	}
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
`, cp.Host, ind(cp.CA.CertPEM), ind(cp.Admin.CertPEM), ind(cp.Admin.KeyPEM)))
}

// Add registers another process to stop with the control plane.
func (cp *ControlPlane) Add(p *Process) { cp.procs = append(cp.procs, p) }

// Stop ends every process, last started first.
func (cp *ControlPlane) Stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].Stop()
	}
	cp.procs = nil
}
