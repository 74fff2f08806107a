package xfn

import (
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// addDNSSECStatus adds the DS records of the signed zones (status.bind.dnssecDS,
// one "<zone>. 3600 IN DS ..." line each) and the name of the Secret holding
// their keys, when the cluster signs a zone.
func addDNSSECStatus(st map[string]any, t Target, ours map[resource.Name]*resource.DesiredComposed) {
	for _, d := range ours {
		m := manifest(d)
		if m.GetKind() != "ConfigMap" || m.GetName() != layout.DSConfigMapName(t.Name) {
			continue
		}
		text, _, _ := unstructured.NestedString(m.Object, "data", layout.DSFile)
		ds := []any{}
		for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
			if l != "" {
				ds = append(ds, l)
			}
		}
		st["dnssecDS"] = ds
		st["dnssecKeysSecret"] = layout.DNSSECSecretName(t.Name)
	}
}
