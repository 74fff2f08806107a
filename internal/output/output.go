// Package output reads back what a render left in its own output for one
// cluster: the zone files of its zones ConfigMaps, by their path in the pod
// with $INCLUDEd parts spliced, and each zone's state — serial and content
// hash — which is the zone's own file: its SOA serial, its text hashed
// (zonefile.StateOf). A removed zone's last state is its tombstone key
// (layout.RemovedZonePrefix). No object holds every zone's state, and a
// change to one zone changes that zone's lines only, so git merges the
// renders of two branches that changed two zones (docs/state.md).
//
// It is the one reader of that state, with one failure rule (Zones): the
// previous state the renderer carries on (internal/prior), the summary of
// what a render changed (internal/pipeline) and the plan (internal/plan)
// read through it. It sits below all of them.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// ConfigMap is a rendered ConfigMap as a reader has it: where it was read
// (its namespace and name in Src.Ref) and its data.
type ConfigMap struct {
	Src  diag.Source
	Data map[string][]byte
}

// Read is the one reader of the zones' state: it groups the zones
// ConfigMaps among cms by cluster (by name, layout.ZonesConfigMapName) and
// reads every zone's state (Shards.Zones), by "<namespace>/<cluster>", then
// by zone file name. Other ConfigMaps are skipped.
func Read(cms []ConfigMap) (map[string]map[string]Zone, diag.Results) {
	shards := map[string]*Shards{}
	for _, cm := range cms {
		cluster, n, ok := ShardOf(cm.Src.Ref.Name)
		if !ok {
			continue
		}
		id := cm.Src.Ref.Namespace + "/" + cluster
		if shards[id] == nil {
			shards[id] = &Shards{}
		}
		shards[id].Add(cm.Src, n, cm.Data)
	}
	out := map[string]map[string]Zone{}
	var rs diag.Results
	ids := make([]string, 0, len(shards))
	for id := range shards {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		zs, zrs := shards[id].Zones()
		out[id] = zs
		rs = append(rs, zrs...)
	}
	return out, rs
}

// ShardOf reads a zones ConfigMap's name, <cluster>-zones-<n>: the cluster
// is the name before the last "-zones-".
func ShardOf(name string) (cluster string, shard int, ok bool) {
	i := strings.LastIndex(name, "-zones-")
	if i <= 0 {
		return "", 0, false
	}
	n, ok := layout.ZonesShard(name[:i], name)
	if !ok {
		return "", 0, false
	}
	return name[:i], n, true
}

// Shards are one cluster's zones ConfigMaps, as rendered.
type Shards struct {
	// files by path in the pod (layout.ZoneFile).
	files map[string][]byte
	// keys are the ConfigMap keys, each with its shard and object.
	keys map[string]keyRef
}

type keyRef struct {
	path string
	src  diag.Source
}

// Add records the data of zones ConfigMap shard (its number in
// layout.ZonesConfigMapName), read from src.
func (s *Shards) Add(src diag.Source, shard int, data map[string][]byte) {
	if s.files == nil {
		s.files = map[string][]byte{}
		s.keys = map[string]keyRef{}
	}
	for k, v := range data {
		p := layout.ZoneFile(shard, k)
		s.files[p] = v
		s.keys[k] = keyRef{path: p, src: src}
	}
}

// Len is the number of files.
func (s *Shards) Len() int { return len(s.files) }

// Raw is the file at path in the pod as its ConfigMap holds it, false when
// no shard has it.
func (s *Shards) Raw(path string) ([]byte, bool) {
	b, ok := s.files[path]
	return b, ok
}

// File is the zone file at path in the pod with every `$INCLUDE <path>`
// line the renderer writes (a zone split across ConfigMaps) replaced by the
// included part. Only whole lines of that one form are replaced.
func (s *Shards) File(path string) ([]byte, error) {
	text, ok := s.files[path]
	if !ok {
		return nil, fmt.Errorf("zone file %s is not in any zones ConfigMap", path)
	}
	return s.splice(text, 0)
}

func (s *Shards) splice(text []byte, depth int) ([]byte, error) {
	if !bytes.Contains(text, []byte("$INCLUDE")) {
		return text, nil
	}
	if depth > 2 {
		return nil, fmt.Errorf("$INCLUDE nested too deep")
	}
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(text, []byte("\n")) {
		if p, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("$INCLUDE ")); ok {
			inc, ok := s.files[string(bytes.TrimSpace(p))]
			if !ok {
				return nil, fmt.Errorf("$INCLUDE %s: not in any zones ConfigMap", p)
			}
			inc, err := s.splice(inc, depth+1)
			if err != nil {
				return nil, err
			}
			out.Write(inc)
			if len(inc) > 0 && inc[len(inc)-1] != '\n' {
				out.WriteByte('\n')
			}
			continue
		}
		out.Write(line)
	}
	return out.Bytes(), nil
}

// Zone is one zone's state as the output holds it.
type Zone struct {
	// Origin is the zone name with its trailing dot, View its view ("" in
	// a cluster without views).
	Origin, View string
	zonefile.State
	// Removed: read from the zone's tombstone, not from a zone file.
	Removed bool
	// Src is the ConfigMap the state was read from.
	Src diag.Source
}

// Tombstone is the content of a removed zone's tombstone key.
type Tombstone struct {
	Zone   string `json:"zone"`
	Serial uint32 `json:"serial"`
	Hash   string `json:"hash"`
}

// TombstoneText is what a removed zone's key holds: one line of JSON.
func TombstoneText(origin string, st zonefile.State) string {
	b, _ := json.Marshal(Tombstone{Zone: origin, Serial: st.Serial, Hash: st.Hash})
	return string(b) + "\n"
}

// prefixes of zone file names (model.ZoneFileName): zones, catalogs and
// response policy zones.
var prefixes = []string{"db", "catalog", "rpz"}

// part is the name of a part of a split zone file (render's partSuffix),
// read through its $INCLUDE, not on its own.
var part = regexp.MustCompile(`\.part-[0-9a-f]{3,}$`)

// Zones is every zone's state by its file name (the ConfigMap key; a
// tombstone's without layout.RemovedZonePrefix). The failure rule, for
// every reader: a zone file or tombstone that does not read is an error
// located at its ConfigMap key, and that zone has no state. A key that is
// not a zone file name is not state, and is skipped.
func (s *Shards) Zones() (map[string]Zone, diag.Results) {
	out := map[string]Zone{}
	var rs diag.Results
	keys := make([]string, 0, len(s.keys))
	for k := range s.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys) // results in a stable order
	for _, k := range keys {
		ref := s.keys[k]
		name, removed := strings.CutPrefix(k, layout.RemovedZonePrefix)
		prefix, _, _ := strings.Cut(name, ".")
		if !isPrefix(prefix) || part.MatchString(name) {
			continue
		}
		var z Zone
		var err error
		if removed {
			z, err = readTombstone(prefix, name, s.files[ref.path])
		} else {
			z, err = s.readZone(prefix, name, ref.path)
		}
		if err != nil {
			rs.Errorf(ref.src, "data["+k+"]", "cannot read the serial of zone file %s: %v; restore the key from the previous render (git checkout), or delete it to count this zone's serial from 1 again", k, err)
			continue
		}
		if prev, ok := out[name]; ok && !prev.Removed {
			continue // a zone file wins over a stale tombstone
		}
		z.Src = ref.src
		out[name] = z
	}
	return out, rs
}

func isPrefix(p string) bool {
	for _, q := range prefixes {
		if p == q {
			return true
		}
	}
	return false
}

func (s *Shards) readZone(prefix, name, path string) (Zone, error) {
	text, err := s.File(path)
	if err != nil {
		return Zone{}, err
	}
	origin, st, err := zonefile.StateOf(text)
	if err != nil {
		return Zone{}, err
	}
	view, err := viewOf(prefix, name, origin)
	return Zone{Origin: origin, View: view, State: st}, err
}

func readTombstone(prefix, name string, text []byte) (Zone, error) {
	var t Tombstone
	d := json.NewDecoder(bytes.NewReader(text))
	d.DisallowUnknownFields()
	if err := d.Decode(&t); err != nil {
		return Zone{}, fmt.Errorf("tombstone: %v", err)
	}
	if t.Serial == 0 || !strings.HasSuffix(t.Zone, ".") {
		return Zone{}, fmt.Errorf("tombstone: want {\"zone\":\"<name>.\",\"serial\":<n>,\"hash\":...}, not %q", bytes.TrimSpace(text))
	}
	view, err := viewOf(prefix, name, t.Zone)
	return Zone{Origin: t.Zone, View: view, State: zonefile.State{Serial: t.Serial, Hash: t.Hash}, Removed: true}, err
}

// viewOf is the view a zone file's name gives (model.ZoneFileName: the
// view, DNS-1123 so never escaped, then "_", before the zone), checked
// against the zone the file holds.
func viewOf(prefix, name, origin string) (string, error) {
	if model.ZoneFileName(prefix, "", origin) == name {
		return "", nil
	}
	zone := strings.TrimPrefix(model.ZoneFileName("", "", origin), ".")
	if v, ok := strings.CutSuffix(strings.TrimPrefix(name, prefix+"."), "_"+zone); ok && v != "" && model.ZoneFileName(prefix, v, origin) == name {
		return v, nil
	}
	return "", fmt.Errorf("the file holds zone %s, which its name does not name", origin)
}

// Label is "example.com" or "example.com" (view internal), for messages.
func (z Zone) Label() string {
	n := z.Origin
	if n != "." {
		n = strings.TrimSuffix(n, ".")
	}
	if z.View == "" {
		return fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("%q (view %s)", n, z.View)
}

// Legacy reads the zone-state annotation of a release before the per-zone
// state (layout.ZoneStateAnnotation: zonefile.State by "[view/]zone")
// into states by zone file name (model.ZoneFileName's db. form), each
// Removed: the annotation is read for the zones removed before the
// upgrade, whose state is in no file. views are the cluster's view names
// (none without BindViews: then a "/" is part of the zone name, as in RFC
// 2317's 0/25.2.0.192.in-addr.arpa). An annotation that does not read
// gives nothing: the files hold every zone still served.
func Legacy(raw string, views []string) map[string]Zone {
	st := map[string]zonefile.State{}
	if json.Unmarshal([]byte(raw), &st) != nil {
		return nil
	}
	out := map[string]Zone{}
	for k, s := range st {
		view, zone := "", k
		for _, v := range views {
			if z, ok := strings.CutPrefix(k, v+"/"); ok {
				view, zone = v, z
				break
			}
		}
		if zone != "." {
			zone += "."
		}
		out[model.ZoneFileName("db", view, zone)] = Zone{Origin: zone, View: view, State: s, Removed: true}
	}
	return out
}
