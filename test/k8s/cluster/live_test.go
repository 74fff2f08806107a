//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
)

var listAll = metav1.ListOptions{}

const (
	kzNS        = "kz"
	kzClusterIP = "10.96.53.55"
)

// TestKustomizeKptLive: examples/kustomize/authoritative, rendered by
// kustomize with fn-render as its exec transformer, applied by `kpt live
// apply --server-side` (an inventory of its own, in namespace kz), its pods
// Ready and serving; an object dropped from the output is pruned by the
// next apply; `kpt live destroy` then removes every object of the
// inventory. The StatefulSet's volume claims stay (Kubernetes' default
// retention), as with an XR.
func TestKustomizeKptLive(t *testing.T) {
	ctx := context.Background()
	coreDNS(t, ctx)
	pushedImages(t)
	t0 := time.Now()
	kpt := func(t *testing.T, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "kpt"), args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+cp.Kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kpt %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The examples in the layout the kustomization's relative paths need
	// (../../authoritative, ../../../bin/fn-render), moved to namespace kz
	// and another serve address.
	tree := t.TempDir()
	for _, d := range []string{"authoritative", filepath.Join("kustomize", "authoritative")} {
		if err := os.CopyFS(filepath.Join(tree, "examples", d), os.DirFS(filepath.Join(root, "examples", d))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bin, filepath.Join(tree, "bin")); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(tree, "examples", "authoritative", "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), "  namespace: dns\n", "  namespace: "+kzNS+"\n")
		s = strings.ReplaceAll(s, "  service:\n    type: LoadBalancer\n", "  service:\n    type: LoadBalancer\n    clusterIP: "+kzClusterIP+"\n")
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command(filepath.Join(bin, "kustomize"), "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join(tree, "examples", "kustomize", "authoritative"))
	out, err := build.Output()
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, out)
	}
	var docs []string
	var objs []*unstructured.Unstructured
	for _, d := range strings.Split(string(out), "\n---\n") {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &o.Object); err != nil || o.GetKind() == "" {
			t.Fatalf("kustomize build output: %v: %q", err, d)
		}
		docs, objs = append(docs, d), append(objs, o)
	}
	live := filepath.Join(t.TempDir(), "live")
	if err := os.MkdirAll(live, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(skip string) {
		var keep []string
		for i, d := range docs {
			if objs[i].GetKind()+"/"+objs[i].GetName() != skip {
				keep = append(keep, d)
			}
		}
		if err := os.WriteFile(filepath.Join(live, "resources.yaml"), []byte(strings.Join(keep, "\n---\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	apply(t, ctx, namespaces(t, kzNS)+hostPathPVs(t, "pv-kz-", 3))
	kpt(t, "live", "install-resource-group")
	kpt(t, "live", "init", live, "--namespace", kzNS, "--name", "bind-fn-auth")
	t1 := time.Now()
	applied := kpt(t, "live", "apply", live, "--server-side", "--reconcile-timeout="+controlplane.Hang.String())
	reconciled := time.Since(t1)
	if os.Getenv("BINDFN_KPT_LOG") != "" { // kpt's own account of each object, when a run is slow
		t.Log(applied)
	}
	ps := waitPodsReady(t, ctx, kzNS, "app.kubernetes.io/instance=auth", 3, controlplane.Hang)
	restarts := 0
	for _, p := range ps {
		for _, c := range p.Status.ContainerStatuses {
			restarts += int(c.RestartCount)
		}
	}
	t.Logf("kustomize build (%d objects) applied by kpt live apply --server-side, which saw every object reconciled after %.1f s: %d pods Ready (%d container restarts) %.1f s after the build started", len(objs), reconciled.Seconds(), len(ps), restarts, time.Since(t0).Seconds())
	var got string
	waitFor(t, "www.example.com through the serve Service", pokeNone, func() error {
		if got, err = dig("@"+kzClusterIP, "www.example.com", "A"); err != nil || !strings.Contains(got, "198.51.100.10") {
			return fmt.Errorf("dig @%s: %v %q", kzClusterIP, err, got)
		}
		return nil
	})

	exists := func(o *unstructured.Unstructured) bool {
		_, err := getJSON("-n", o.GetNamespace(), strings.ToLower(o.GetKind()), o.GetName())
		return err == nil
	}
	// Pruned: the PodDisruptionBudget left out of the next apply.
	var pdb *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "PodDisruptionBudget" {
			pdb = o
		}
	}
	if pdb == nil {
		t.Fatal("the rendered example has no PodDisruptionBudget")
	}
	write("PodDisruptionBudget/" + pdb.GetName())
	kpt(t, "live", "apply", live, "--server-side", "--reconcile-timeout="+controlplane.Hang.String())
	waitFor(t, "the PodDisruptionBudget pruned", pokeNone, func() error {
		if exists(pdb) {
			return fmt.Errorf("PodDisruptionBudget/%s still there", pdb.GetName())
		}
		return nil
	})

	t2 := time.Now()
	kpt(t, "live", "destroy", live)
	waitFor(t, "every object of the inventory and every pod gone", pokeNone, func() error {
		var left []string
		for _, o := range objs {
			if exists(o) {
				left = append(left, o.GetKind()+"/"+o.GetName())
			}
		}
		if rgs, err := items("-n", kzNS, "resourcegroups.kpt.dev"); err != nil || len(rgs) > 0 {
			left = append(left, fmt.Sprintf("%d ResourceGroups (%v)", len(rgs), err))
		}
		if l, err := cs.CoreV1().Pods(kzNS).List(ctx, listAll); err != nil || len(l.Items) > 0 {
			left = append(left, fmt.Sprintf("%d pods (%v)", len(l.Items), err))
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		return nil
	})
	pvcs, err := cs.CoreV1().PersistentVolumeClaims(kzNS).List(ctx, listAll)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kpt live destroy removed all %d objects, its inventory and the pods in %.1f s; the StatefulSet's %d volume claims stay (Retain)", len(objs), time.Since(t2).Seconds(), len(pvcs.Items))
}
