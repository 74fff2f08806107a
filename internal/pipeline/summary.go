package pipeline

import (
	"fmt"
	"maps"
	"slices"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/mapkeys"
	"git.unkin.net/unkin/bind-fn/internal/output"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// MaxZoneSummary is the most per-zone lines ZoneSummary returns; the rest
// are counted in one more line.
const MaxZoneSummary = 20

// ZoneSummary is one info result per zone a render changes — its serial
// moved (its content changed), or it was added or removed — read by the one
// reader of the zones' state (output.Read) from the zones ConfigMaps of the
// previous output and of the new one. It is what a kpt user sees after
// `kpt fn render`; `bind-fn plan` shows the records. Clusters without a
// previous render are not summarised (every zone would be "added").
func ZoneSummary(prev []prior.Object, objs []render.Object) diag.Results {
	before, _ := output.Read(zoneConfigMaps(prev)) // read by the render already: its errors were reported there
	var now []prior.Object
	for _, o := range objs {
		if p, ok := prior.ObjectOf(o.Obj); ok && p.Kind == "ConfigMap" {
			p.Src.File = o.Path
			now = append(now, p)
		}
	}
	after, _ := output.Read(zoneConfigMaps(now))
	var rs diag.Results
	var extra int
	for _, id := range slices.Sorted(maps.Keys(after)) {
		old, had := before[id]
		if !had {
			continue
		}
		cur := after[id]
		for _, k := range mapkeys.Union(old, cur) {
			a, b := old[k], cur[k]
			aok := a.Serial != 0 && !a.Removed
			bok := b.Serial != 0 && !b.Removed
			var line string
			src := b.Src
			switch {
			case !aok && bok:
				line = fmt.Sprintf("zone %s: added, serial %d", b.Label(), b.Serial)
			case aok && !bok:
				line = fmt.Sprintf("zone %s: removed", a.Label())
				if src.Ref.Name == "" {
					src = a.Src
				}
			case aok && (a.Hash != b.Hash || a.Serial != b.Serial):
				line = fmt.Sprintf("zone %s: changed, serial %d → %d", b.Label(), a.Serial, b.Serial)
			default:
				continue
			}
			if len(rs) >= MaxZoneSummary {
				extra++
				continue
			}
			rs = append(rs, diag.Result{Severity: diag.Info, Source: src, Message: line + " (bind-fn plan shows the records)"})
		}
	}
	if extra > 0 {
		rs = append(rs, diag.Result{Severity: diag.Info, Message: fmt.Sprintf("%d more zones changed; bind-fn plan lists them all", extra)})
	}
	return rs
}

// zoneConfigMaps are the ConfigMaps among objs with their data.
func zoneConfigMaps(objs []prior.Object) []output.ConfigMap {
	var out []output.ConfigMap
	for _, o := range objs {
		if o.Kind == "ConfigMap" && len(o.Data) > 0 {
			out = append(out, output.ConfigMap{Src: o.Src, Data: o.Data})
		}
	}
	return out
}
