package xfn_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/xfn"
)

// TestCrossplaneRBAC: Crossplane composes only what its ClusterRole lets it,
// and a composed kind it may not create fails the XR at run time, in a
// cluster (a kind added to the render, package/rbac not told: the pods'
// ServiceAccount, Role and RoleBinding once were). So every kind the
// function composes, for the full example XR and for a claim's composite,
// must be granted in package/rbac/aggregate-to-crossplane.yaml with every
// verb Crossplane's composer uses.
func TestCrossplaneRBAC(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "package", "rbac", "aggregate-to-crossplane.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatalf("package/rbac/aggregate-to-crossplane.yaml: %v", err)
	}
	allowed := func(gr schema.GroupResource, verb string) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, gr.Group) && slices.Contains(r.Resources, gr.Resource) && (slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) {
				return true
			}
		}
		return false
	}
	xrYAML, err := os.ReadFile(filepath.Join(root, "examples", "crossplane", "xr.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	xrJSON, err := yaml.YAMLToJSON(xrYAML)
	if err != nil {
		t.Fatal(err)
	}
	composed := map[schema.GroupResource]string{}
	for name, r := range map[string]string{"examples/crossplane/xr.yaml": string(xrJSON), "a claim's composite": legacy(claimRef)} {
		rsp, err := (&xfn.Function{Rand: &testutil.DetRand{}}).RunFunction(context.Background(), req(r, none(), nil))
		if err != nil {
			t.Fatalf("%s: RunFunction: %v", name, err)
		}
		if len(rsp.GetDesired().GetResources()) == 0 {
			t.Fatalf("%s: nothing composed: %v", name, rsp.GetResults())
		}
		for _, d := range rsp.GetDesired().GetResources() {
			f := d.GetResource().GetFields()
			gvk := schema.FromAPIVersionAndKind(f["apiVersion"].GetStringValue(), f["kind"].GetStringValue())
			plural, _ := meta.UnsafeGuessKindToResource(gvk)
			composed[plural.GroupResource()] = gvk.Kind
		}
	}
	var missing []string
	for gr, kind := range composed {
		for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
			if !allowed(gr, verb) {
				missing = append(missing, kind+" ("+gr.String()+"): "+verb)
			}
		}
	}
	sort.Strings(missing)
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("composed kinds package/rbac/aggregate-to-crossplane.yaml does not grant Crossplane (-want, +got):\n%s", diff)
	}
	if len(composed) < 7 {
		t.Errorf("only %d kinds composed (%v): the example should compose StatefulSets, Services, ConfigMaps, Secrets, PDBs and RBAC", len(composed), composed)
	}
}
