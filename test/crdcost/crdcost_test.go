// Package crdcost validates the CRDs (config/crd) and the CRDs Crossplane
// derives from the XRDs (package/*/xrd.yaml) with the API server's own CRD
// validation (k8s.io/apiextensions-apiserver, the version of the
// kube-apiserver the control-plane tests run), so a schema whose CEL rules
// exceed the cost budget fails in seconds, before test/k8s proves it on a
// real kube-apiserver and Crossplane core.
//
// It is its own module so the main go.mod does not carry the API server.
package crdcost

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

const root = "../.."

// validate runs the API server's create validation on a v1 CRD and returns
// its errors as strings.
func validate(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) []string {
	t.Helper()
	scheme := runtime.NewScheme()
	install.Install(scheme)
	scheme.Default(crd)
	var internal apiextensions.CustomResourceDefinition
	if err := scheme.Convert(crd, &internal, nil); err != nil {
		t.Fatalf("%s: convert: %v", crd.Name, err)
	}
	var out []string
	for _, e := range validation.ValidateCustomResourceDefinition(context.Background(), &internal) {
		out = append(out, e.Error())
	}
	return out
}

func readCRD(t *testing.T, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &crd
}

// xrd is the part of a CompositeResourceDefinition a derived CRD is made of.
type xrd struct {
	Spec struct {
		Group      string                                         `json:"group"`
		Scope      string                                         `json:"scope"`
		Names      apiextensionsv1.CustomResourceDefinitionNames  `json:"names"`
		ClaimNames *apiextensionsv1.CustomResourceDefinitionNames `json:"claimNames"`
		Versions   []struct {
			Name   string `json:"name"`
			Schema struct {
				OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

func readXRD(t *testing.T, path string) xrd {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var x xrd
	if err := yaml.Unmarshal(data, &x); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return x
}

// derive builds the CRD Crossplane makes of an XRD (or of its claim): the
// XRD's schema as the CRD's, in one served storage version. Crossplane also
// adds its own fields (spec.crossplane, resourceRefs, ...): they carry no CEL
// rule of ours, and test/k8s checks the real derivation.
func derive(t *testing.T, x xrd, claim bool, edit func(schema map[string]any)) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	names, scope := x.Spec.Names, apiextensionsv1.NamespaceScoped
	if x.Spec.Scope != "Namespaced" {
		scope = apiextensionsv1.ClusterScoped
	}
	if claim {
		names, scope = *x.Spec.ClaimNames, apiextensionsv1.NamespaceScoped
	}
	if names.ListKind == "" {
		names.ListKind = names.Kind + "List"
	}
	if names.Singular == "" {
		names.Singular = strings.ToLower(names.Kind)
	}
	v := x.Spec.Versions[0]
	js, err := yaml.Marshal(v.Schema.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(raw)
	}
	js, _ = yaml.Marshal(raw)
	var schema apiextensionsv1.JSONSchemaProps
	if err := yaml.UnmarshalStrict(js, &schema); err != nil {
		t.Fatalf("schema: %v", err)
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metaCRD,
		ObjectMeta: objectMeta(names.Plural + "." + x.Spec.Group),
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: x.Spec.Group,
			Names: names,
			Scope: scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: v.Name, Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

// TestCRDs: every generated CRD passes the API server's validation,
// including the CEL cost budget.
func TestCRDs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in config/crd (%v)", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if errs := validate(t, readCRD(t, f)); len(errs) > 0 {
				t.Errorf("%s is refused by the API server's validation:\n%s", f, strings.Join(errs, "\n"))
			}
		})
	}
}

// TestDerivedCRDs: the CRDs Crossplane derives from both configuration
// packages' XRDs pass, and the same schemas without their bounds are refused
// for the CEL cost (the failure docs/design.md#crd-bounds describes), so this test can fail.
func TestDerivedCRDs(t *testing.T) {
	cases := map[string]struct {
		reason string
		xrd    string
		claim  bool
		edit   func(map[string]any)
		// wantErr: a substring every expected error list contains; "" = none.
		wantErr string
	}{
		"XBindCluster": {
			reason: "the v2 namespaced XR as committed",
			xrd:    "package/configuration/xrd.yaml",
		},
		"XLegacyBindCluster": {
			reason: "the legacy cluster-scoped XR as committed",
			xrd:    "package/configuration-claim/xrd.yaml",
		},
		"BindClusterClaim": {
			reason: "the legacy XRD's claim as committed",
			xrd:    "package/configuration-claim/xrd.yaml",
			claim:  true,
		},
		"XBindClusterWithoutBounds": {
			reason:  "every maxLength/maxItems/maxProperties removed: the DNSRecord rule inside spec.records is over budget",
			xrd:     "package/configuration/xrd.yaml",
			edit:    func(s map[string]any) { stripBounds(s) },
			wantErr: "spec.validation.openAPIV3Schema.properties[spec].properties[records].items.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget",
		},
		"XBindClusterUnboundedRecordType": {
			reason:  "only the DNSRecord type left without maxLength (as before the fix): the apex-NS rule's lowerAscii() is costed for a 3 MB string, 10,000 times",
			xrd:     "package/configuration/xrd.yaml",
			edit:    func(s map[string]any) { delete(at(s, "spec", "records", "spec", "type"), "maxLength") },
			wantErr: "properties[records].items.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget",
		},
		"ClaimWithoutBounds": {
			reason:  "the claim's schema without bounds is refused too",
			xrd:     "package/configuration-claim/xrd.yaml",
			claim:   true,
			edit:    func(s map[string]any) { stripBounds(s) },
			wantErr: "estimated rule cost exceeds budget",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			crd := derive(t, readXRD(t, filepath.Join(root, tc.xrd)), tc.claim, tc.edit)
			errs := validate(t, crd)
			if tc.wantErr == "" {
				if len(errs) > 0 {
					t.Errorf("%s: %s: the derived CRD is refused:\n%s", tc.reason, tc.xrd, strings.Join(errs, "\n"))
				}
				return
			}
			if !strings.Contains(strings.Join(errs, "\n"), tc.wantErr) {
				t.Errorf("%s: want an error containing %q, got:\n%s", tc.reason, tc.wantErr, strings.Join(errs, "\n"))
			}
		})
	}
}

// stripBounds removes every maxLength, maxItems and maxProperties.
func stripBounds(v any) {
	switch t := v.(type) {
	case map[string]any:
		delete(t, "maxLength")
		delete(t, "maxItems")
		delete(t, "maxProperties")
		for _, e := range t {
			stripBounds(e)
		}
	case []any:
		for _, e := range t {
			stripBounds(e)
		}
	}
}

// at walks properties (and array items) of a schema: at(s, "spec", "records", "spec", "type").
func at(s map[string]any, path ...string) map[string]any {
	cur := s
	for _, p := range path {
		if it, ok := cur["items"].(map[string]any); ok {
			cur = it
		}
		props, _ := cur["properties"].(map[string]any)
		next, ok := props[p].(map[string]any)
		if !ok {
			panic("crdcost: no schema at " + strings.Join(path, "."))
		}
		cur = next
	}
	return cur
}

var metaCRD = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
