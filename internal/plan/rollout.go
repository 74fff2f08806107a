package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/mapkeys"
)

// compareObjects compares the objects that are neither config nor zone
// data nor keys: the StatefulSet (its pod template decides a roll),
// Services and the PodDisruptionBudget.
func compareObjects(o, n *snapshot) ([]ObjectChange, Rollout) {
	var out []ObjectChange
	var r Rollout
	for _, k := range mapkeys.Union(o.objs, n.objs) {
		a, b := o.objs[k], n.objs[k]
		x := a
		if x == nil {
			x = b
		}
		if x.Kind == "ConfigMap" || x.Kind == "Secret" {
			continue
		}
		switch {
		case a == nil:
			out = append(out, ObjectChange{Kind: x.Kind, Name: x.Name, Change: Added})
		case b == nil:
			out = append(out, ObjectChange{Kind: x.Kind, Name: x.Name, Change: Removed})
		default:
			if !bytes.Equal(a.Spec, b.Spec) || !maps.Equal(a.Labels, b.Labels) || !maps.Equal(a.Annotations, b.Annotations) {
				out = append(out, ObjectChange{Kind: x.Kind, Name: x.Name, Change: Changed})
			}
			if !bytes.Equal(a.Template, b.Template) {
				r.RollsPods = true
				r.Reasons = append(r.Reasons, jsonPaths("spec.template", a.Template, b.Template, 4)...)
			}
		}
	}
	return out, r
}

// jsonPaths lists the paths (down to depth levels) where two JSON documents
// differ: "spec.template.spec.volumes", "spec.template.spec.containers[0].image".
func jsonPaths(prefix string, a, b []byte, depth int) []string {
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	var out []string
	var walk func(p string, x, y any, d int)
	walk = func(p string, x, y any, d int) {
		xm, xok := x.(map[string]any)
		ym, yok := y.(map[string]any)
		if xok && yok && d > 0 {
			for _, k := range mapkeys.Union(xm, ym) {
				walk(p+"."+k, xm[k], ym[k], d-1)
			}
			return
		}
		xs, xok := x.([]any)
		ys, yok := y.([]any)
		if xok && yok && len(xs) == len(ys) && d > 0 {
			for i := range xs {
				walk(fmt.Sprintf("%s[%d]", p, i), xs[i], ys[i], d-1)
			}
			return
		}
		xb, _ := json.Marshal(x)
		yb, _ := json.Marshal(y)
		if !bytes.Equal(xb, yb) {
			out = append(out, p)
		}
	}
	walk(prefix, x, y, depth)
	return out
}

// liveActions describes what the agent does without a restart, and what
// running servers will not see.
func liveActions(cp *ClusterPlan) (live, notApplied []string) {
	if cp.Change != Changed {
		return nil, nil
	}
	reconfig := len(cp.Config) > 0 || len(cp.Keys) > 0
	var reload, update, seed []string
	for _, z := range cp.Zones {
		if z.Change != Changed || len(z.Config) > 0 || z.OldType != "" {
			reconfig = true // a zone statement added, removed or changed
		}
		if z.Change != Changed || (len(z.RRsets) == 0 && z.Serial == nil) {
			continue
		}
		id := zoneID(z.View, z.Zone)
		switch z.Apply {
		case applyReload:
			reload = append(reload, id)
		case applyUpdate:
			update = append(update, id)
		case applySeed:
			seed = append(seed, id)
		}
	}
	if reconfig {
		live = append(live, "named.conf: the agent checks it (named-checkconf) and runs rndc reconfig (zones added or removed with it)")
	}
	if len(reload) > 0 {
		live = append(live, fmt.Sprintf("zone files: the agent runs rndc reload (%s)", listCut(reload, 10)))
	}
	if len(update) > 0 {
		live = append(live, fmt.Sprintf("dynamic zones: the agent converges the records by UPDATE (%s)", listCut(update, 10)))
	}
	if len(seed) > 0 {
		notApplied = append(notApplied, fmt.Sprintf("signed zones seeded once into the data volume: running servers keep their copy, only a new volume gets the new file (%s)", listCut(seed, 10)))
	}
	return live, notApplied
}

func listCut(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%s, … %d more", strings.Join(s[:n], ", "), len(s)-n)
}
