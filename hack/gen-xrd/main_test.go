package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
		s := openAPISchema(t, cfg)["properties"].(map[string]any)
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

// TestCELBounds: in both XRDs, every list enclosing a CEL rule has maxItems,
// and every field a rule reads (self.<field>) is bounded: a string by
// maxLength, a list by maxItems (its strings by maxLength), a map by
// maxProperties. Without them the API server costs a rule for a 3 MB value
// once per possible list entry, and refuses the CRD Crossplane derives from
// the XRD (docs/design.md#crd-bounds). test/crdcost runs the API server's own check.
func TestCELBounds(t *testing.T) {
	root := bindtools.RepoRoot(t)
	for name, cfg := range map[string]func(string) Config{"Namespaced": DefaultConfig, "Legacy": LegacyConfig} {
		t.Run(name, func(t *testing.T) {
			schema := openAPISchema(t, cfg(filepath.Join(root, "config", "crd")))
			rules := 0
			for _, p := range unbounded(schema, "", false, &rules) {
				t.Errorf("%s: unbounded (add maxLength/maxItems/maxProperties in api/ and regenerate)", p)
			}
			if rules == 0 {
				t.Error("no x-kubernetes-validations found: the walk is broken")
			}
		})
	}
}

// openAPISchema is the openAPIV3Schema of the first version of the XRD
// cfg generates.
func openAPISchema(t *testing.T, cfg Config) map[string]any {
	t.Helper()
	out, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var xrd map[string]any
	if err := yaml.Unmarshal(out, &xrd); err != nil {
		t.Fatal(err)
	}
	v := xrd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
	return v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
}

var selfField = regexp.MustCompile(`\bself\.([A-Za-z_][A-Za-z0-9_]*)`)

// unbounded walks a schema and returns the paths of what a CEL rule reaches
// without a bound. inList: the schema is inside a list (map) without maxItems.
func unbounded(s map[string]any, path string, inList bool, rules *int) []string {
	var bad []string
	props, _ := s["properties"].(map[string]any)
	if xv, ok := s["x-kubernetes-validations"].([]any); ok {
		if inList {
			bad = append(bad, path+" (a rule inside a list without maxItems)")
		}
		for _, r := range xv {
			*rules++
			rule, _ := r.(map[string]any)["rule"].(string)
			seen := map[string]bool{}
			for _, m := range selfField.FindAllStringSubmatch(rule, -1) {
				if seen[m[1]] {
					continue
				}
				seen[m[1]] = true
				f, ok := props[m[1]].(map[string]any)
				if !ok {
					bad = append(bad, fmt.Sprintf("%s: rule reads self.%s, which the schema does not declare", path, m[1]))
					continue
				}
				if p := fieldBound(f); p != "" {
					bad = append(bad, fmt.Sprintf("%s.%s%s (read by %q)", path, m[1], p, rule))
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		bad = append(bad, unbounded(props[k].(map[string]any), path+"."+k, inList, rules)...)
	}
	if it, ok := s["items"].(map[string]any); ok {
		_, hasMax := s["maxItems"]
		bad = append(bad, unbounded(it, path+"[]", inList || !hasMax, rules)...)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		_, hasMax := s["maxProperties"]
		bad = append(bad, unbounded(ap, path+"{}", inList || !hasMax, rules)...)
	}
	return bad
}

// fieldBound is "" when a field a rule reads is bounded, else what is missing.
func fieldBound(f map[string]any) string {
	switch f["type"] {
	case "string":
		if _, ok := f["maxLength"]; !ok {
			return " has no maxLength"
		}
	case "array":
		if _, ok := f["maxItems"]; !ok {
			return " has no maxItems"
		}
		if it, ok := f["items"].(map[string]any); ok {
			if p := fieldBound(it); p != "" {
				return "[]" + p
			}
		}
	case "object":
		if _, ok := f["additionalProperties"]; ok {
			if _, ok := f["maxProperties"]; !ok {
				return " has no maxProperties"
			}
		}
	}
	return ""
}
