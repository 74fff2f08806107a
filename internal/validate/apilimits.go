package validate

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// checkNamespaces: every object's namespace becomes the namespace of every
// object rendered from it, and the API server takes only a DNS-1123 label.
func checkNamespaces(s *model.Set) diag.Results {
	var rs diag.Results
	for _, src := range s.Sources() {
		ns := src.Ref.Namespace
		if ns == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			rs.Errorf(src, "metadata.namespace", "cannot use namespace %q: it is not a DNS-1123 label (%s), so the API server would refuse every object rendered into it; use lower-case letters, digits and '-', at most 63", ns, strings.Join(errs, "; "))
		}
	}
	return rs
}
