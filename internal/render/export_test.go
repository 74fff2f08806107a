package render

import (
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// NamedConfs renders both named.conf roles of c without zone files, for the
// benchmarks (render_bench_test.go). It checks nothing: the model parsed
// every value.
func NamedConfs(c *model.Cluster) (primary, secondary []byte, rs diag.Results) {
	plan := &confPlan{files: map[zoneKey]string{}, catalogs: map[string]string{}, policies: map[zoneKey]string{}}
	primary, prs := namedConf(c, Primary, plan)
	secondary, srs := namedConf(c, Secondary, plan)
	return primary, secondary, append(prs, srs...)
}
