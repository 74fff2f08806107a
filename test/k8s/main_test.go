// Package k8s runs bind-fn against a real control plane: etcd v3.6.5 and
// kube-apiserver v1.34.2 (and, in crossplane_test.go, Crossplane core
// v2.1.0 with the built function-bind), all built by hack/install-k8s.sh
// into bin/, started in a private network namespace this test binary makes
// for itself (loopback only) and torn down at the end. Needs root; its own
// module so the main go.mod does not carry client-go's server-side pieces.
//
//	make k8s-test        (part of make test)
package k8s

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
)

// env is the one control plane every test of this package shares.
var env struct {
	root, bin, dir string
	cp             *controlplane.ControlPlane
	warn           *warnings
	cfg            *rest.Config
	dyn            dynamic.Interface
	mapper         *restmapper.DeferredDiscoveryRESTMapper
}

func TestMain(m *testing.M) {
	if os.Geteuid() != 0 && os.Getenv("BINDFN_SKIP_ROOT") == "1" {
		fmt.Println("test/k8s: skipped (BINDFN_SKIP_ROOT=1, not root)")
		os.Exit(0)
	}
	reexeced, code, err := controlplane.InPrivateNetwork()
	if err != nil {
		fmt.Fprintln(os.Stderr, "test/k8s:", err)
		os.Exit(1)
	}
	if reexeced {
		os.Exit(code)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	wd, _ := os.Getwd()
	env.root = filepath.Clean(filepath.Join(wd, "..", ".."))
	env.bin = filepath.Join(env.root, "bin")
	if b := os.Getenv("BINDFN_BIN"); b != "" {
		env.bin = b
	}
	for _, b := range []string{"etcd", "kube-apiserver", "crossplane-core", "function-bind", "kpt", "fn-render", "fn-validate"} {
		if _, err := os.Stat(filepath.Join(env.bin, b)); err != nil {
			fmt.Fprintf(os.Stderr, "test/k8s: bin/%s is missing: run 'make tools build' (hack/install-k8s.sh builds the control plane)\n", b)
			return 1
		}
	}
	dir, err := os.MkdirTemp("", "bindfn-k8s-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env.dir = dir
	ctx, cancel := context.WithTimeout(context.Background(), controlplane.Hang)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Bin: env.bin, Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "test/k8s: control plane:", err)
		return 1
	}
	env.cp = cp
	fmt.Printf("test/k8s: etcd + kube-apiserver ready in %.1f s (logs in %s)\n", cp.Started.Seconds(), dir)
	env.warn = &warnings{}
	env.cfg = cp.RestConfig(env.warn)
	env.dyn = dynamic.NewForConfigOrDie(env.cfg)
	env.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(env.cfg)))
	code := m.Run()
	cp.Stop()
	if code == 0 && os.Getenv("BINDFN_K8S_KEEP") == "" {
		os.RemoveAll(dir)
	} else {
		fmt.Printf("test/k8s: logs and data kept in %s\n", dir)
	}
	return code
}

// warnings collects the API server's Warning headers.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// take returns the warnings since the last take.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

var _ meta.RESTMapper = (*restmapper.DeferredDiscoveryRESTMapper)(nil)
