// Package validate holds the invariants every input must satisfy before
// anything is rendered. One check list, used by fn-validate, fn-render and the
// Crossplane function.
package validate

import (
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// Check runs every check over the decoded set and the resolved clusters.
func Check(set *model.Set, clusters []*model.Cluster, prev *render.Previous) diag.Results {
	var rs diag.Results
	return rs
}
