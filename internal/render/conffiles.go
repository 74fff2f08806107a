package render

import (
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// NamedConfs renders both named.conf roles of c without zone files (the
// benchmarks measure it). It checks nothing: the model parsed every value.
func NamedConfs(c *model.Cluster) (primary, secondary []byte, rs diag.Results) {
	plan := &confPlan{files: map[zoneKey]string{}, catalogs: map[string]string{}, policies: map[zoneKey]string{}}
	primary, prs := namedConf(c, Primary, plan)
	secondary, srs := namedConf(c, Secondary, plan)
	return primary, secondary, append(prs, srs...)
}

// ZoneState returns the serial and content hash a previous render recorded
// for a zone of cluster c (view "" without views; zone canonical, with the
// trailing dot), and whether there was one.
func (p *Previous) ZoneState(c *model.Cluster, view, zone string) (zonefile.State, bool) {
	if p == nil {
		return zonefile.State{}, false
	}
	s, ok := p.zoneState(c)[stateKey(view, zone)]
	return s, ok
}
