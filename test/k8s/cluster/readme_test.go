//go:build cluster

package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeDeployMarker precedes the README's Deploy block: the commands a
// newcomer pastes, which TestReadmeDeploy runs as written.
const readmeDeployMarker = "<!-- runnable: deploy"

// TestReadmeDeploy pastes the README's Deploy block into bash on this
// cluster, from a copy of the repository's examples with bin/ beside them
// (a fresh clone after `make build`): render, namespace, apply, rollout,
// and `kubectl run ... dig` against every pod, each of which must answer.
// The cluster stands in for the reader's in two ways the README names
// before the block: the images are pushed to a registry where the render's
// defaults name them (the README's "your registry" line, at the default
// names, so spec.image stays as it is), and hostPath PersistentVolumes
// stand in for a default StorageClass.
func TestReadmeDeploy(t *testing.T) {
	ctx := context.Background()
	coreDNS(t, ctx) // dig reaches the pods by their headless names
	block := docBlock(t, "README.md", readmeDeployMarker)
	pushedImages(t)

	// The README creates namespace dns; TestRenderedCluster's run of the
	// same example lives there. Start from none.
	freshNamespace(t, ctx, "dns")
	apply(t, ctx, hostPathPVs(t, "readme-pv-", 3))

	tree := t.TempDir()
	if err := os.CopyFS(filepath.Join(tree, "examples"), os.DirFS(filepath.Join(root, "examples"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(tree, "bin")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
	cmd.Dir = tree
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cp.Kubeconfig, "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	t.Logf("the README's Deploy block:\n%s\nprinted:\n%s", block, out)
	if err != nil {
		t.Fatalf("the README's Deploy block failed: %v", err)
	}
	// One answer per pod: the CNAME and the address it leads to.
	if n := strings.Count(string(out), "198.51.100.10"); n != 3 {
		t.Errorf("the README's Deploy block should print 198.51.100.10 once per pod (3), printed it %d times", n)
	}
}
