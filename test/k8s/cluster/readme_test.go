//go:build cluster

package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
)

// readmeDeployMarker precedes the README's Deploy block: the commands a
// newcomer pastes, which TestReadmeDeploy runs as written.
const readmeDeployMarker = "<!-- runnable: deploy"

// readmeBlock returns the first fenced code block after marker in the
// README.
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("README.md has no %q block", marker)
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(s[i:])
	if m == nil {
		t.Fatalf("README.md: no ```sh block after %q", marker)
	}
	return m[1]
}

// TestReadmeDeploy pastes the README's Deploy block into bash on this
// cluster, from a copy of the repository's examples with bin/ beside them
// (a fresh clone after `make build`): render, namespace, apply, rollout,
// and `kubectl run ... dig` against every pod, each of which must answer.
// The cluster stands in for the reader's in two ways the README names
// before the block: the images are loaded into the node's containerd (as
// `kind load image-archive` does), and hostPath PersistentVolumes stand in
// for a default StorageClass.
func TestReadmeDeploy(t *testing.T) {
	ctx := context.Background()
	coreDNS(t, ctx) // dig reaches the pods by their headless names
	block := readmeBlock(t, readmeDeployMarker)
	localImages(t)

	// The README creates namespace dns; TestRenderedCluster's run of the
	// same example lives there. Start from none.
	if err := cs.CoreV1().Namespaces().Delete(ctx, "dns", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	deadline := time.Now().Add(controlplane.Hang)
	for {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "dns", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace dns still there after %s: %v", controlplane.Hang, err)
		}
		time.Sleep(time.Second)
	}
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
