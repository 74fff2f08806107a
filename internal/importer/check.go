package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/miekg/dns"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/mapkeys"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// Items are the result's objects as pipeline items, files in name order.
func (r *Result) Items() ([]model.Item, error) {
	var files []string
	for f := range r.Objects {
		files = append(files, f)
	}
	sort.Strings(files)
	var out []model.Item
	for _, f := range files {
		for i, o := range r.Objects[f] {
			js, err := json.Marshal(o)
			if err != nil {
				return nil, err
			}
			it, err := model.ItemOf(f, i, js)
			if err != nil {
				return nil, err
			}
			out = append(out, it)
		}
	}
	return out, nil
}

var extraField = regexp.MustCompile(`^spec\.extraOptions\[(\d+)\]`)

// Check renders the result through the pipeline. extraOptions entries
// bind-fn refuses move to the losses; the served serials, pinned for that
// render, become the package's state (handOver); then every zone the
// import read is compared with the package's render from that state, RRset
// by RRset and serial, and each difference is a loss. It returns the
// render's results when the package does not render for another reason
// (then the import is not usable as is, and the serials stay pinned).
func (r *Result) Check(rand io.Reader) (diag.Results, error) {
	var objs []render.Object
	for round := 0; ; round++ {
		items, err := r.Items()
		if err != nil {
			return nil, err
		}
		var rs diag.Results
		objs, rs = pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: rand})
		if !rs.HasErrors() {
			break
		}
		drop := map[int]string{}
		zones := map[string]string{}
		var other diag.Results
		for _, res := range rs {
			if res.Severity != diag.Error {
				continue
			}
			if m := extraField.FindStringSubmatch(res.Field); m != nil && res.Source.Ref.Kind == v1alpha1.KindBindCluster {
				i, _ := strconv.Atoi(m[1])
				drop[i] = res.Message
				continue
			}
			if _, ok := r.ZoneWhere[res.Source.Ref.Name]; ok && res.Source.Ref.Kind == v1alpha1.KindBindZone {
				zones[res.Source.Ref.Name] = res.Field + ": " + res.Message
				continue
			}
			other = append(other, res)
		}
		if len(other) > 0 || (len(drop) == 0 && len(zones) == 0) || round > 3 {
			return rs, nil
		}
		r.dropExtra(drop)
		r.dropZones(zones)
	}
	objs, err := r.handOver(objs, rand)
	if err != nil {
		return nil, err
	}
	err = r.compareZones(objs)
	sortLosses(r.Losses)
	return nil, err
}

func (r *Result) cluster() *v1alpha1.BindCluster {
	return r.Objects["cluster.yaml"][0].(*v1alpha1.BindCluster)
}

// dropZones takes the zones bind-fn refuses out of the package: each is a
// loss at its zone statement, and the rest of the package still renders.
func (r *Result) dropZones(drop map[string]string) {
	if len(drop) == 0 {
		return
	}
	var keep []any
	for _, o := range r.Objects["zones.yaml"] {
		z := o.(*v1alpha1.BindZone)
		msg, ok := drop[z.Name]
		if !ok {
			keep = append(keep, o)
			continue
		}
		r.Losses = append(r.Losses, Loss{Where: r.ZoneWhere[z.Name], What: "zone " + z.Spec.ZoneName, Why: "bind-fn refuses the zone (" + msg + "): it is left out of the package"})
		var zones []Zone
		for _, rz := range r.Zones {
			if rz.Name == z.Spec.ZoneName && (z.Spec.ViewRef == "" || r.viewName(z.Spec.ViewRef) == rz.View) {
				continue
			}
			zones = append(zones, rz)
		}
		r.Zones = zones
	}
	r.Objects["zones.yaml"] = keep
	sortLosses(r.Losses)
}

// pinnedSerial is the serial the import carried for the zone of BIND
// view view: its BindZone's spec.soa.serial, or, once handOver moved it
// into the state, the served serial.
func (r *Result) pinnedSerial(view, zone string) *uint32 {
	for _, o := range r.Objects["zones.yaml"] {
		z := o.(*v1alpha1.BindZone)
		if z.Spec.ZoneName != zone || (z.Spec.ViewRef != "" && r.viewName(z.Spec.ViewRef) != view) {
			continue
		}
		if z.Spec.SOA != nil && z.Spec.SOA.Serial != nil {
			return z.Spec.SOA.Serial
		}
		if s, ok := r.served[z.Name]; ok {
			return &s
		}
		return nil
	}
	return nil
}

// viewName is the BIND name of a BindView object.
func (r *Result) viewName(obj string) string {
	for _, o := range r.Objects["views.yaml"] {
		if v := o.(*v1alpha1.BindView); v.Name == obj {
			if v.Spec.ViewName != "" {
				return v.Spec.ViewName
			}
			return v.Name
		}
	}
	return obj
}

func (r *Result) dropExtra(drop map[int]string) {
	c := r.cluster()
	var keep []string
	var where []string
	for i, o := range c.Spec.ExtraOptions {
		if msg, ok := drop[i]; ok {
			r.Losses = append(r.Losses, Loss{Where: r.ExtraWhere[i], What: o + ";", Why: "bind-fn refuses it in extraOptions: " + msg})
			continue
		}
		keep = append(keep, o)
		where = append(where, r.ExtraWhere[i])
	}
	c.Spec.ExtraOptions, r.ExtraWhere = keep, where
	sortLosses(r.Losses)
}

// compareZones compares every zone read from a file with its render.
func (r *Result) compareZones(objs []render.Object) error {
	pobjs, err := plan.FromRender(objs)
	if err != nil {
		return err
	}
	rendered, err := plan.ZoneContents(pobjs)
	if err != nil {
		return err
	}
	serials, err := plan.ZoneSerials(pobjs)
	if err != nil {
		return err
	}
	for _, z := range r.Zones {
		id := z.Name
		if z.View != "" {
			id = z.View + "/" + z.Name
		}
		got, ok := rendered[id]
		where := z.File + ":1"
		if !ok {
			r.Losses = append(r.Losses, Loss{Where: where, What: "zone " + z.Name, Why: "the render has no such zone"})
			continue
		}
		want, serial := plan.ZoneDataOf(z.RRs)
		if p := r.pinnedSerial(z.View, z.Name); p != nil {
			serial = *p // a signed zone's is its signed version's
		}
		if z.Kind == "zone" && serials[id] != serial {
			r.Losses = append(r.Losses, Loss{Where: where, What: fmt.Sprintf("zone %s serial %d", z.Name, serial), Why: fmt.Sprintf("the rendered zone has serial %d: the server's secondaries transfer only a higher serial", serials[id])})
		}
		switch z.Kind {
		case "catalog":
			r.compareCatalog(z, want, got)
			continue
		case "policy":
			// bind-fn writes its own SOA and NS for policy zones.
			apex := dns.CanonicalName(dns.Fqdn(z.Name))
			for _, d := range []plan.ZoneData{want, got} {
				delete(d, apex+" SOA")
				delete(d, apex+" NS")
			}
		}
		for _, k := range mapkeys.Union(want, got) {
			w, wok := want[k]
			g, gok := got[k]
			switch {
			case !gok:
				r.Losses = append(r.Losses, Loss{Where: where, What: k, Why: "not in the rendered zone"})
			case !wok:
				r.Losses = append(r.Losses, Loss{Where: where, What: k, Why: "the rendered zone adds it: " + strings.Join(g.Values, " | ")})
			case w.TTL != g.TTL || strings.Join(w.Values, "\n") != strings.Join(g.Values, "\n"):
				r.Losses = append(r.Losses, Loss{Where: where, What: k, Why: fmt.Sprintf("rendered as TTL %d %s (was TTL %d %s)", g.TTL, strings.Join(g.Values, " | "), w.TTL, strings.Join(w.Values, " | "))})
			}
		}
	}
	return nil
}

func (r *Result) compareCatalog(z Zone, want, got plan.ZoneData) {
	members := func(d plan.ZoneData) map[string]bool {
		out := map[string]bool{}
		for k, v := range d {
			if strings.HasSuffix(k, " PTR") && strings.Contains(k, ".zones.") {
				for _, t := range v.Values {
					out[strings.ToLower(t)] = true
				}
			}
		}
		return out
	}
	w, g := members(want), members(got)
	for _, m := range mapkeys.Union(w, g) {
		if !g[m] {
			r.Losses = append(r.Losses, Loss{Where: z.Name, What: "catalog member " + m, Why: "not in the rendered catalog"})
		} else if !w[m] {
			r.Losses = append(r.Losses, Loss{Where: z.Name, What: "catalog member " + m, Why: "the rendered catalog adds it"})
		}
	}
}

// YAML writes objects as a multi-document YAML file, without the empty
// fields typed structs serialise (status: {}, creationTimestamp: null).
func YAML(objs []any) ([]byte, error) {
	var b strings.Builder
	for i, o := range objs {
		js, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			return nil, err
		}
		clean(m)
		y, err := yaml.Marshal(m)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return []byte(b.String()), nil
}

func clean(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			clean(x)
			if len(x) == 0 && !presence[k] {
				delete(m, k)
			}
		}
	}
}

// presence are fields whose empty value says something: `nsec3: {}` is
// NSEC3 with BIND's default (all-zero) parameters, its absence NSEC.
var presence = map[string]bool{"nsec3": true}
