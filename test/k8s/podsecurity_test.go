package k8s

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// renderedFiles are the render's golden files of one kind (every example
// and every case of internal/render/testdata), e.g. "statefulset".
func renderedFiles(t *testing.T, kind string) []string {
	t.Helper()
	var files []string
	for _, p := range []string{"*/rendered/*/", "cases/*/golden/rendered/*/"} {
		m, err := filepath.Glob(filepath.Join(env.root, "internal", "render", "testdata", p, kind+"_*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no rendered %s files under internal/render/testdata", kind)
	}
	return files
}

// podOf is the pod the StatefulSet controller would make for ordinal 0 of
// sts, in namespace ns: the template, with the data claim's volume.
func podOf(t *testing.T, sts *unstructured.Unstructured, ns string) *unstructured.Unstructured {
	t.Helper()
	tmpl, ok, _ := unstructured.NestedMap(sts.Object, "spec", "template")
	if !ok {
		t.Fatalf("%s: no pod template", id(sts))
	}
	spec, _ := tmpl["spec"].(map[string]any)
	claims, _, _ := unstructured.NestedSlice(sts.Object, "spec", "volumeClaimTemplates")
	vols, _ := spec["volumes"].([]any)
	for _, c := range claims {
		name, _, _ := unstructured.NestedString(c.(map[string]any), "metadata", "name")
		vols = append(vols, map[string]any{"name": name, "persistentVolumeClaim": map[string]any{"claimName": name + "-" + sts.GetName() + "-0"}})
	}
	spec["volumes"] = vols
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": tmpl["metadata"],
		"spec":     spec,
	}}
	pod.SetName(sts.GetName() + "-0")
	pod.SetNamespace(ns)
	return pod
}

// TestPodSecurityRestricted: every rendered StatefulSet's pod is admitted
// by the API server's Pod Security admission in a namespace that enforces
// the restricted standard (dry run: nothing runs), with no warning; every
// rendered NetworkPolicy is accepted there too. Control: the same pod with
// one rule broken (seccomp Unconfined) is refused, so the admission is on.
func TestPodSecurityRestricted(t *testing.T) {
	ctx := context.Background()
	const ns = "restricted"
	nsObj := &unstructured.Unstructured{}
	nsObj.SetGroupVersionKind(gvkNamespace)
	nsObj.SetName(ns)
	nsObj.SetLabels(map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/warn":            "restricted",
		"pod-security.kubernetes.io/warn-version":    "latest",
	})
	mustApply(t, ctx, nsObj)

	var first *unstructured.Unstructured
	for _, f := range renderedFiles(t, "statefulset") {
		for _, sts := range readObjects(t, f) {
			pod := podOf(t, sts, ns)
			// The pod runs as the rendered agent ServiceAccount, which the
			// API server looks up before admission: make it (no RBAC: the
			// pod never runs).
			if sa, _, _ := unstructured.NestedString(pod.Object, "spec", "serviceAccountName"); sa != "" {
				mustApply(t, ctx, &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "v1", "kind": "ServiceAccount",
					"metadata": map[string]any{"name": sa, "namespace": ns},
				}})
			}
			if first == nil {
				first = pod
			}
			_, warn, err := apply(ctx, pod, true)
			if err != nil {
				t.Errorf("%s (from %s): %v", id(pod), f, err)
			}
			if len(warn) > 0 {
				t.Errorf("%s (from %s): warnings %q", id(pod), f, warn)
			}
		}
	}

	bad := first.DeepCopy()
	if err := unstructured.SetNestedField(bad.Object, "Unconfined", "spec", "securityContext", "seccompProfile", "type"); err != nil {
		t.Fatal(err)
	}
	_, _, err := apply(ctx, bad, true)
	if err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Errorf("a pod with seccomp Unconfined in %s: got %v, want a PodSecurity refusal", ns, err)
	}

	n := 0
	for _, f := range renderedFiles(t, "networkpolicy") {
		for _, np := range readObjects(t, f) {
			np.SetNamespace(ns)
			_, warn, err := apply(ctx, np, true)
			if err != nil {
				t.Errorf("%s (from %s): %v", id(np), f, err)
			}
			if len(warn) > 0 {
				t.Errorf("%s (from %s): warnings %q", id(np), f, warn)
			}
			n++
		}
	}
	t.Logf("every rendered pod admitted under restricted, %d NetworkPolicies accepted", n)
}
