package pipeline

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/mapkeys"
	"git.unkin.net/unkin/bind-fn/internal/objects"
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

// Fresh counts what a render without a previous output made afresh: the
// Secrets of keys others use (TSIG keys, DNSSEC keys: imported keys are
// not rendered; the rndc key never leaves the pods) and the zones whose
// serial it started at 1 (read by the one reader, output.Read). With any
// previous output both are 0: what it held was kept.
func Fresh(prev []prior.Object, objs []render.Object) (secrets, zones int) {
	if len(prev) > 0 {
		return 0, 0
	}
	var cms []prior.Object
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *corev1.Secret:
			if c := v.Labels[objects.LabelComponent]; c == objects.ComponentTSIG || c == objects.ComponentDNSSECKeys {
				secrets++
			}
		case *corev1.ConfigMap:
			if p, ok := prior.ObjectOf(v); ok {
				cms = append(cms, p)
			}
		}
	}
	all, _ := output.Read(zoneConfigMaps(cms))
	for _, zs := range all {
		for _, z := range zs {
			if z.Serial == 1 && !z.Removed {
				zones++
			}
		}
	}
	return secrets, zones
}
