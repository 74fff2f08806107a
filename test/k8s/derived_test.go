package k8s

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// derivedCRD is a CRD with an XRD's schema (what Crossplane derives, minus
// Crossplane's own fields), optionally with every bound stripped.
func derivedCRD(t *testing.T, xrdFile, plural string, strip bool) *unstructured.Unstructured {
	t.Helper()
	xrd := readObjects(t, xrdFile)[0]
	versions, _, _ := unstructured.NestedSlice(xrd.Object, "spec", "versions")
	v := versions[0].(map[string]any)
	schema := v["schema"].(map[string]any)["openAPIV3Schema"]
	if strip {
		stripBounds(schema)
	}
	group, _, _ := unstructured.NestedString(xrd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(xrd.Object, "spec", "names", "kind")
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group,
			"names": map[string]any{"kind": kind, "plural": plural},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": v["name"], "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": schema},
			}},
		},
	}}
}

// TestUnboundedSchemaRefused: on the real API server, the XRD's schema is
// accepted as a CRD with its bounds and refused without them, at the path
// of docs/design.md#crd-bounds — the bounds are what makes the derived CRDs installable.
func TestUnboundedSchemaRefused(t *testing.T) {
	ctx := context.Background()
	xrd := filepath.Join(env.root, "package", "configuration", "xrd.yaml")
	if _, _, err := apply(ctx, derivedCRD(t, xrd, "boundedtests", false), true); err != nil {
		t.Errorf("the XRD's schema as a CRD is refused: %v", err)
	}
	_, _, err := apply(ctx, derivedCRD(t, xrd, "unboundedtests", true), true)
	want := "spec.validation.openAPIV3Schema.properties[spec].properties[records].items.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the schema without bounds: error %v, want one containing %q", err, want)
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
