package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/xfn"
)

// TestNoDrift regenerates both XRDs from config/crd and compares them with
// the committed copies: edit api/, run make generate and go run ./hack/gen-xrd.
func TestNoDrift(t *testing.T) {
	root := bindtools.RepoRoot(t)
	for _, tg := range Targets {
		want, err := Generate(tg.Config(filepath.Join(root, "config", "crd")))
		if err != nil {
			t.Fatal(err)
		}
		noDrift(t, root, tg.Files, want)
	}
}

func noDrift(t *testing.T, root string, files []string, want []byte) {
	t.Helper()
	tmp := t.TempDir()
	for _, target := range files {
		got, err := os.ReadFile(filepath.Join(root, target))
		if err != nil {
			t.Fatalf("%s: %v (run 'go run ./hack/gen-xrd')", target, err)
		}
		if !bytes.Equal(want, got) {
			p := filepath.Join(tmp, filepath.Base(target))
			_ = os.WriteFile(p, want, 0o644)
			t.Errorf("%s is stale (fresh copy in %s): run 'go run ./hack/gen-xrd'\n%s", target, p, cmp.Diff(string(want), string(got)))
		}
	}
}

// TestSchema checks the shape of what is generated.
func TestSchema(t *testing.T) {
	for name, cfg := range map[string]func(string) Config{"Namespaced": DefaultConfig, "Legacy": LegacyConfig} {
		t.Run(name, func(t *testing.T) { testSchema(t, cfg) })
	}
}

func testSchema(t *testing.T, config func(string) Config) {
	root := bindtools.RepoRoot(t)
	cfg := config(filepath.Join(root, "config", "crd"))
	out, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var xrd struct {
		Spec struct {
			ClaimNames *struct {
				Kind string `json:"kind"`
			} `json:"claimNames"`
			Scope    string `json:"scope"`
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties struct {
							Spec struct {
								Properties map[string]struct {
									Type     string   `json:"type"`
									ListType string   `json:"x-kubernetes-list-type"`
									MapKeys  []string `json:"x-kubernetes-list-map-keys"`
									Items    struct {
										Required   []string `json:"required"`
										Properties struct {
											Spec struct {
												Required []string `json:"required"`
											} `json:"spec"`
										} `json:"properties"`
									} `json:"items"`
								} `json:"properties"`
							} `json:"spec"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(out, &xrd); err != nil {
		t.Fatal(err)
	}
	props := xrd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties.Spec.Properties
	cases := map[string]struct {
		reason string
		field  string
		want   []string // required of the entry's spec
	}{
		"ZonesNeedZoneNameNotClusterRef": {"inline zones default clusterRef to the XR", "zones", []string{"zoneName"}},
		"RecordsKeepZoneRef":             {"records still name their zone", "records", []string{"type", "values", "zoneRef"}},
		"KeysNeedNothing":                {"an empty key spec is a generated hmac-sha256 key", "keys", nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, ok := props[tc.field]
			if !ok || p.Type != "array" || p.ListType != "map" || !cmp.Equal(p.MapKeys, []string{"name"}) {
				t.Fatalf("%s: spec.%s is not a list-map keyed by name: %+v", tc.reason, tc.field, p)
			}
			if diff := cmp.Diff(tc.want, p.Items.Properties.Spec.Required); diff != "" {
				t.Errorf("%s: spec.%s[].spec.required: -want, +got:\n%s", tc.reason, tc.field, diff)
			}
		})
	}
	for _, l := range xfn.Lists {
		if _, ok := props[l.Field]; !ok {
			t.Errorf("spec.%s (%s) is missing", l.Field, l.Kind)
		}
	}
	if _, ok := props["replicas"]; !ok {
		t.Error("the cluster's fields belong at spec level: spec.replicas is missing")
	}
	if xrd.Spec.Scope != cfg.Scope {
		t.Errorf("scope = %q, want %q", xrd.Spec.Scope, cfg.Scope)
	}
	_, hasNS := props[xfn.NamespaceField]
	switch {
	case cfg.Cluster() && (xrd.Spec.ClaimNames == nil || xrd.Spec.ClaimNames.Kind != xfn.ClaimKind || !hasNS):
		t.Errorf("a legacy XRD offers the claim %s and spec.%s: claimNames %+v, spec.%s present %v", xfn.ClaimKind, xfn.NamespaceField, xrd.Spec.ClaimNames, xfn.NamespaceField, hasNS)
	case !cfg.Cluster() && (xrd.Spec.ClaimNames != nil || hasNS):
		t.Errorf("a namespaced XRD has no claim and no spec.%s", xfn.NamespaceField)
	}
}

// TestSameSchema: the legacy XRD's spec is the namespaced one's, plus
// spec.namespace: one schema source, two XRDs.
func TestSameSchema(t *testing.T) {
	root := bindtools.RepoRoot(t)
	spec := func(cfg Config) map[string]any {
		out, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var xrd map[string]any
		if err := yaml.Unmarshal(out, &xrd); err != nil {
			t.Fatal(err)
		}
		v := xrd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
		s := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)
		sp := s["spec"].(map[string]any)
		delete(sp, "description")
		delete(sp["properties"].(map[string]any), xfn.NamespaceField)
		return s
	}
	crd := filepath.Join(root, "config", "crd")
	if diff := cmp.Diff(spec(DefaultConfig(crd)), spec(LegacyConfig(crd))); diff != "" {
		t.Errorf("the legacy XRD's schema (+) differs from the namespaced one's (-) beyond spec.%s:\n%s", xfn.NamespaceField, diff)
	}
}
