package k8s

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestMultiClusterApply renders examples/multi-cluster (a hidden primary
// and two secondary clusters, docs/multi-cluster.md) with kpt and applies
// each cluster's output directory, rendered/<cluster>/, as the GitOps tool
// of that Kubernetes cluster would: server-side, dry run then for real, no
// warning. The API server stands in for each cluster in turn: a cluster's
// objects are deleted before the next cluster's are applied.
func TestMultiClusterApply(t *testing.T) {
	ctx := context.Background()
	installCRDs(t, ctx, crdFiles(t)...)
	dir := kptPackage(t, "multi-cluster")
	kptRender(t, dir)
	clusters, err := os.ReadDir(filepath.Join(dir, "rendered"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range clusters {
		if c.IsDir() {
			names = append(names, c.Name())
		}
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "corp,edge-eu,edge-us" {
		t.Fatalf("rendered directories %v, want one per BindCluster (corp, edge-eu, edge-us)", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(dir, "rendered", name, "*.yaml"))
			if err != nil || len(files) == 0 {
				t.Fatalf("no objects under rendered/%s: %v", name, err)
			}
			sort.Strings(files)
			objs := readObjects(t, files...)
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GetKind()]++
				if ns := o.GetNamespace(); ns != "" {
					namespace(t, ctx, ns)
				}
			}
			t.Cleanup(func() { deleteAll(ctx, objs) })
			for _, dry := range []bool{true, false} {
				for _, o := range objs {
					_, warn, err := apply(ctx, o, dry)
					if err != nil {
						t.Errorf("apply (dry run %v) %s: %v", dry, id(o), err)
					}
					if len(warn) > 0 {
						t.Errorf("apply (dry run %v) %s: warnings %q", dry, id(o), warn)
					}
				}
			}
			t.Logf("rendered/%s: %d objects applied (dry run, real): %v", name, len(objs), kinds)
		})
	}
}

// deleteAll removes the objects (no namespace controller runs here).
func deleteAll(ctx context.Context, objs []*unstructured.Unstructured) {
	for _, o := range objs {
		if r, err := resource(o); err == nil {
			_ = r.Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		}
	}
}
