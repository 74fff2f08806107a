package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/miekg/dns"

	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/output"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// The served serial is the floor bind-fn counts up from, not a pin.
//
// A zone's serial is state, not spec (docs/state.md): the render keeps it
// while the content stays the same and raises it by one when the content
// changes, reading the last serial and content hash back from the zone's
// rendered file. An import starts that count at the serial the server
// served: Import pins it in spec.soa.serial for Check's first render only;
// handOver keeps that render's zone files — serial and content hash of each
// imported zone, the state a render leaves — as the package's previous
// output (Result.State, written under rendered/<cluster>/ where kpt and
// bind-fn render write them), and takes the pins out of the BindZones. So
// a render of the unchanged package serves the same serial, and the first
// edit serves the next one, above what every secondary of the original
// holds. A pin would refuse that edit ("cannot change zone ... without
// changing its serial") until the user raised it by hand.
//
// A catalog zone is bind-fn's own (its member labels are bind-fn's), so its
// content is never the original's: its state is the original catalog's
// serial as a removed zone's (a tombstone), and the render counts one above
// it — the original's catalog consumers transfer bind-fn's catalog.

// handOver moves the served serials from spec.soa.serial (pinned for the
// render of objs) into the package's state, then renders the package as
// its user will — without pins, from that state — and returns that render.
func (r *Result) handOver(objs []render.Object, rand io.Reader) ([]render.Object, error) {
	r.State = zoneShards(objs)
	if err := r.catalogFloors(); err != nil {
		return nil, err
	}
	r.served = map[string]uint32{}
	for _, o := range r.Objects["zones.yaml"] {
		z := o.(*v1alpha1.BindZone)
		if z.Spec.SOA == nil || z.Spec.SOA.Serial == nil {
			continue
		}
		r.served[z.Name] = *z.Spec.SOA.Serial
		z.Spec.SOA.Serial = nil
		if *z.Spec.SOA == (v1alpha1.SOASpec{}) {
			z.Spec.SOA = nil
		}
	}
	items, err := r.Items()
	if err != nil {
		return nil, err
	}
	out, rs := pipeline.Run(pipeline.Input{Items: items, Previous: r.Previous()}, render.Options{Rand: rand})
	if rs.HasErrors() {
		return nil, fmt.Errorf("the imported package renders with its serials pinned, not from its own state: %v", rs)
	}
	// The state written is what the package renders: its first render
	// changes no zone.
	r.State = zoneShards(out)
	return out, nil
}

// catalogFloors replaces, in State, each imported catalog's file by a
// tombstone holding the original catalog's serial and the hash of its
// content (not bind-fn's).
func (r *Result) catalogFloors() error {
	orig := map[string]Zone{} // by origin
	for _, z := range r.Zones {
		if z.Kind == "catalog" {
			orig[dns.Fqdn(strings.ToLower(z.Name))] = z
		}
	}
	if len(orig) == 0 {
		return nil
	}
	for _, o := range r.State {
		cm := o.Obj.(*corev1.ConfigMap)
		for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
			if !strings.HasPrefix(key, "catalog.") {
				continue
			}
			origin, _, err := zonefile.StateOf([]byte(cm.Data[key]))
			if err != nil {
				return fmt.Errorf("the import's render of %s: %w", key, err)
			}
			z, ok := orig[origin]
			if !ok {
				continue
			}
			var serial uint32
			h := sha256.New()
			for _, rr := range z.RRs {
				if soa, ok := rr.(*dns.SOA); ok {
					serial = soa.Serial
				}
				fmt.Fprintln(h, rr.String())
			}
			if serial == 0 {
				continue
			}
			delete(cm.Data, key)
			cm.Data[layout.RemovedZonePrefix+key] = output.TombstoneText(origin, zonefile.State{Serial: serial, Hash: hex.EncodeToString(h.Sum(nil))})
		}
	}
	return nil
}

// zoneShards are the zones ConfigMaps (<cluster>-zones-<n>) of a render:
// every zone's file, whose SOA line holds its serial and content hash.
func zoneShards(objs []render.Object) []render.Object {
	var out []render.Object
	for _, o := range objs {
		if cm, ok := o.Obj.(*corev1.ConfigMap); ok {
			if _, _, ok := output.ShardOf(cm.Name); ok {
				out = append(out, o)
			}
		}
	}
	return out
}

// Previous is the package's state (State) as a render's previous output.
func (r *Result) Previous() []prior.Object {
	var out []prior.Object
	for _, o := range r.State {
		if p, ok := prior.ObjectOf(o.Obj); ok {
			out = append(out, p)
		}
	}
	return out
}

// ServedSerial is the serial the original served for zone (without the
// trailing dot) of the BindView object viewObj ("" without views), the
// floor its render counts up from; false when the import carried none.
func (r *Result) ServedSerial(viewObj, zone string) (uint32, bool) {
	for _, o := range r.Objects["zones.yaml"] {
		z := o.(*v1alpha1.BindZone)
		if z.Spec.ZoneName != zone || (viewObj != "" && z.Spec.ViewRef != viewObj) {
			continue
		}
		if z.Spec.SOA != nil && z.Spec.SOA.Serial != nil { // before Check: still pinned
			return *z.Spec.SOA.Serial, true
		}
		s, ok := r.served[z.Name]
		return s, ok
	}
	return 0, false
}

// StateFiles are State's ConfigMaps as the package's files, by path in
// the package: where a render writes them (rendered/<cluster>/), so the
// first render of the package reads them as its previous output and
// writes its own over them.
func (r *Result) StateFiles() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, o := range r.State {
		b, err := YAML([]any{o.Obj})
		if err != nil {
			return nil, err
		}
		out[o.Path] = b
	}
	return out, nil
}
