package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/mapkeys"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// MaxZoneSummary is the most per-zone lines ZoneSummary returns; the rest
// are counted in one more line.
const MaxZoneSummary = 20

// ZoneSummary is one info result per zone a render changes — its serial
// moved (its content changed), or it was added or removed — read from the
// zone-state annotation of the previous and the new <cluster>-config
// ConfigMap. It is what a kpt user sees after `kpt fn render`; `bind-fn
// plan` shows the records. Clusters without a previous render are not
// summarised (every zone would be "added").
func ZoneSummary(prev []prior.Object, objs []render.Object) diag.Results {
	before := map[string]map[string]zonefile.State{}
	for _, p := range prev {
		if p.Kind != "ConfigMap" {
			continue
		}
		if st, ok := zoneStates(p.Annotations); ok {
			before[p.Src.Ref.Namespace+"/"+p.Src.Ref.Name] = st
		}
	}
	var rs diag.Results
	var extra int
	for _, o := range objs {
		cm, ok := o.Obj.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		after, ok := zoneStates(cm.Annotations)
		old, had := before[cm.Namespace+"/"+cm.Name]
		if !ok || !had {
			continue
		}
		src := diag.Source{Ref: diag.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}, File: o.Path}
		var lines []string
		for _, k := range mapkeys.Union(old, after) {
			a, aok := old[k]
			b, bok := after[k]
			switch {
			case !aok:
				lines = append(lines, fmt.Sprintf("zone %s: added, serial %d", zoneLabel(k), b.Serial))
			case !bok:
				lines = append(lines, fmt.Sprintf("zone %s: removed", zoneLabel(k)))
			case a.Hash != b.Hash || a.Serial != b.Serial:
				lines = append(lines, fmt.Sprintf("zone %s: changed, serial %d → %d", zoneLabel(k), a.Serial, b.Serial))
			}
		}
		for _, l := range lines {
			if len(rs) >= MaxZoneSummary {
				extra++
				continue
			}
			rs = append(rs, diag.Result{Severity: diag.Info, Source: src, Message: l + " (bind-fn plan shows the records)"})
		}
	}
	if extra > 0 {
		rs = append(rs, diag.Result{Severity: diag.Info, Message: fmt.Sprintf("%d more zones changed; bind-fn plan lists them all", extra)})
	}
	return rs
}

func zoneStates(a map[string]string) (map[string]zonefile.State, bool) {
	raw, ok := a[layout.ZoneStateAnnotation]
	if !ok {
		return nil, false
	}
	st := map[string]zonefile.State{}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return nil, false
	}
	return st, true
}

// zoneLabel is "example.com" or "example.com (view internal)" for a state
// key "[view/]zone".
func zoneLabel(k string) string {
	if v, z, ok := strings.Cut(k, "/"); ok {
		return fmt.Sprintf("%q (view %s)", z, v)
	}
	return fmt.Sprintf("%q", k)
}
