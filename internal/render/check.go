package render

import (
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// CheckConf renders both named.conf roles of c without zone files and
// returns what the renderer reports about them (address match lists, server
// entries, extraOptions, DNSSEC policies, views): the validator reports these
// before, and without, a full render. The results are identical to the ones
// Render gives, so a caller may merge and deduplicate both.
func CheckConf(c *model.Cluster) diag.Results {
	plan := &confPlan{files: map[zoneKey]string{}, catalogs: map[string]string{}, policies: map[zoneKey]string{}}
	_, prs := namedConf(c, Primary, plan)
	_, srs := namedConf(c, Secondary, plan)
	return append(prs, srs...)
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
