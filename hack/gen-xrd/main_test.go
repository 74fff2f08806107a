package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/xfn"
)

// TestNoDrift regenerates the XRD from config/crd and compares it with the
// committed copies: edit api/, run make generate and go run ./hack/gen-xrd.
func TestNoDrift(t *testing.T) {
	root := testutil.RepoRoot(t)
	want, err := Generate(DefaultConfig(filepath.Join(root, "config", "crd")))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for _, target := range Targets {
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
	root := testutil.RepoRoot(t)
	out, err := Generate(DefaultConfig(filepath.Join(root, "config", "crd")))
	if err != nil {
		t.Fatal(err)
	}
	var xrd struct {
		Spec struct {
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
	if xrd.Spec.Scope != "Namespaced" {
		t.Errorf("scope = %q, want Namespaced", xrd.Spec.Scope)
	}
}
