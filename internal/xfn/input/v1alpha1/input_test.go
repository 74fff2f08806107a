package v1alpha1_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestInputCRDNoDrift regenerates the Input CRD with controller-gen and
// compares it with package/function/input: run go generate ./internal/xfn/input/...
func TestInputCRDNoDrift(t *testing.T) {
	root := bindtools.RepoRoot(t)
	cg := bindtools.Bin(t, "controller-gen")
	out := t.TempDir()
	cmd := exec.Command(cg, "crd:crdVersions=v1", "paths=./internal/xfn/input/...", "output:crd:artifacts:config="+out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen: %v\n%s", err, b)
	}
	name := "fn.bind.unkin.net_inputs.yaml"
	want, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "package", "function", "input", name))
	if err != nil {
		t.Fatalf("%v (run go generate ./internal/xfn/input/...)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("package/function/input/%s is stale: run go generate ./internal/xfn/input/...\n%s", name, cmp.Diff(string(want), string(got)))
	}
}
