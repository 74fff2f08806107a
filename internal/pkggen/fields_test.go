package pkggen

import (
	"reflect"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
)

// notVaried are the API fields the generator leaves alone, and why.
var notVaried = map[string]string{
	// Kubernetes pass-through structures: the generator sets common shapes
	// (requests/limits, one toleration); their sub-fields are k8s.io types.

	// Imported DNSSEC keys need their private files in the pod's Secret,
	// which the harness does not lay out; test/multipod's DNSSEC scenario
	// and internal/render's dnssec tests run importExisting with real keys.
	"BindCluster.spec.dnssec":                "imported DNSSEC keys (see above)",
	"BindCluster.spec.dnssec.importExisting": "imported DNSSEC keys (see above)",
	"BindCluster.spec.dnssec.publicKeys":     "imported DNSSEC keys (see above)",
}

// apiFields are the spec field paths of the nine kinds, from the Go types'
// JSON tags, descending into the project's own structs (not k8s.io types).
func apiFields() []string {
	kinds := map[string]any{
		"BindCluster": v1alpha1.BindClusterSpec{}, "BindTSIGKey": v1alpha1.BindTSIGKeySpec{},
		"BindACL": v1alpha1.BindACLSpec{}, "BindDNSSECPolicy": v1alpha1.BindDNSSECPolicySpec{},
		"BindView": v1alpha1.BindViewSpec{}, "BindZone": v1alpha1.BindZoneSpec{},
		"BindCatalogZone": v1alpha1.BindCatalogZoneSpec{}, "BindPolicy": v1alpha1.BindPolicySpec{},
		"DNSRecord": v1alpha1.DNSRecordSpec{},
	}
	var out []string
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || !strings.HasSuffix(t.PkgPath(), "api/v1alpha1") {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			out = append(out, prefix+"."+name)
			walk(prefix+"."+name, f.Type)
		}
	}
	for k, v := range kinds {
		walk(k+".spec", reflect.TypeOf(v))
	}
	return out
}
