package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/output"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// snapshot is one rendered BindCluster as DNS sees it.
type snapshot struct {
	ns, name string
	// conf is each role's named.conf, parsed.
	conf  map[string][]namedconf.Stmt
	agent *layout.AgentConfigDoc
	// zones are the zones ConfigMaps, read by the one reader of rendered
	// zone files (internal/output).
	files output.Shards
	// keys are the generated TSIG keys by key name.
	keys map[string]keyState
	// rndc is a digest of the rndc key Secret.
	rndc [32]byte
	// objs are every object of the cluster, by kind/name.
	objs map[string]*Object
}

type keyState struct {
	secret    string
	algorithm string
	digest    [32]byte // of the material: compared, never shown
	imported  bool
}

// Roles of named.conf.
const (
	rolePrimary   = "primary"
	roleSecondary = "secondary"
)

// snapshots groups objects by cluster (namespace and instance label). A key
// Secret shared by the namespace's clusters is rendered with the first
// cluster that uses it, so it is found there.
func snapshots(objs []Object) (map[string]*snapshot, error) {
	out := map[string]*snapshot{}
	get := func(ns, name string) *snapshot {
		id := ns + "/" + name
		s := out[id]
		if s == nil {
			s = &snapshot{ns: ns, name: name, conf: map[string][]namedconf.Stmt{}, keys: map[string]keyState{}, objs: map[string]*Object{}}
			out[id] = s
		}
		return s
	}
	for i := range objs {
		o := &objs[i]
		if o.Cluster() == "" {
			continue
		}
		s := get(o.Namespace, o.Cluster())
		s.objs[o.Kind+"/"+o.Name] = o
		switch {
		case o.Kind == "ConfigMap" && o.Component() == objects.ComponentConfig:
			for role, key := range map[string]string{rolePrimary: layout.NamedConfPrimary, roleSecondary: layout.NamedConfSecondary} {
				stmts, err := namedconf.ParseStatements(string(o.Data[key]))
				if err != nil {
					return nil, fmt.Errorf("ConfigMap %s/%s %s: %w", o.Namespace, o.Name, key, err)
				}
				s.conf[role] = stmts
			}
			if a := o.Data[layout.AgentConfig]; len(a) > 0 {
				s.agent = &layout.AgentConfigDoc{}
				if err := json.Unmarshal(a, s.agent); err != nil {
					return nil, fmt.Errorf("ConfigMap %s/%s %s: %w", o.Namespace, o.Name, layout.AgentConfig, err)
				}
			}
		case o.Kind == "ConfigMap" && o.Component() == objects.ComponentZones:
			shard, ok := layout.ZonesShard(o.Cluster(), o.Name)
			if !ok {
				return nil, fmt.Errorf("ConfigMap %s/%s: a zones ConfigMap of cluster %s is named %s-zones-<n>", o.Namespace, o.Name, o.Cluster(), o.Cluster())
			}
			src := diag.Source{Ref: diag.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: o.Namespace, Name: o.Name}}
			s.files.Add(src, shard, o.Data)
		case o.Kind == "Secret" && o.Component() == objects.ComponentTSIG:
			name := string(o.Data["keyName"])
			if name == "" {
				name = o.Name
			}
			s.keys[name] = keyState{secret: o.Name, algorithm: string(o.Data["algorithm"]), digest: sha256.Sum256(o.Data["secret"])}
		case o.Kind == "Secret" && o.Component() == objects.ComponentRNDC:
			s.rndc = sha256.Sum256(o.Data[layout.RNDCKeyFile])
		}
	}
	for _, s := range out {
		// The zone statements and the agent's per-zone lists are in the
		// zones ConfigMaps (docs/state.md#shards).
		for role, stmts := range s.conf {
			exp, err := s.expandIncludes(stmts)
			if err != nil {
				return nil, fmt.Errorf("cluster %s/%s named.conf.%s: %w", s.ns, s.name, role, err)
			}
			s.conf[role] = exp
		}
		if s.agent == nil {
			continue
		}
		for _, p := range s.agent.ZoneDocs {
			b, ok := s.files.Raw(p)
			if !ok {
				return nil, fmt.Errorf("cluster %s/%s agent.json: %s is in no zones ConfigMap", s.ns, s.name, p)
			}
			var d layout.ZonesDoc
			if err := json.Unmarshal(b, &d); err != nil {
				return nil, fmt.Errorf("cluster %s/%s %s: %w", s.ns, s.name, p, err)
			}
			s.agent.AddZones(d)
		}
		for _, k := range s.agent.ImportedKeys {
			s.keys[k.KeyName] = keyState{secret: k.Secret, algorithm: k.Algorithm, imported: true}
		}
	}
	return out, nil
}

// expandIncludes replaces, at the top level and in each view, every
// include of a file the zones ConfigMaps hold by its statements; includes
// of files the pod writes (keys, servers) stay.
func (s *snapshot) expandIncludes(stmts []namedconf.Stmt) ([]namedconf.Stmt, error) {
	var out []namedconf.Stmt
	for _, st := range stmts {
		switch {
		case st.Name() == "include" && !st.Block:
			b, ok := s.files.Raw(st.Arg(1))
			if !ok {
				out = append(out, st)
				continue
			}
			inc, err := namedconf.ParseStatements(string(b))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", st.Arg(1), err)
			}
			out = append(out, inc...)
		case st.Name() == "view" && st.Block:
			body, err := s.expandIncludes(st.Body)
			if err != nil {
				return nil, err
			}
			st.Body = body
			out = append(out, st)
		default:
			out = append(out, st)
		}
	}
	return out, nil
}

// zone is one zone a cluster serves, as the primary's named.conf declares it.
type zone struct {
	view, name string
	typ        string
	file       string
	// conf are the zone's statements, one line each (file excluded: it
	// moves between shards without changing DNS).
	conf []string
	// apply says how a content change reaches the running servers.
	apply string
	// rrsets by owner and type (SOA excluded); soa is the SOA.
	rrsets map[rrKey]*rrset
	soa    *dns.SOA
	err    error
	// text is the zone file with its $INCLUDEs spliced, from path; parsed
	// says rrsets and soa are read (only zones whose text changed are).
	text   []byte
	path   string
	parsed bool
}

type rrKey struct {
	name string // canonical owner
	typ  uint16
}

type rrset struct {
	owner  string
	ttl    uint32
	values []string // sorted presentation rdata
}

// How a zone content change is applied.
const (
	applyReload = "reload"   // a ConfigMap file: the agent runs rndc reload
	applyUpdate = "update"   // dynamic: the agent sends UPDATEs
	applySeed   = "seed"     // signed, not dynamic: the file only seeds a new data volume
	applyXfr    = "transfer" // secondary, stub, forward: nothing to apply
)

// zones lists the zones of the primary role (every pod serves the same
// zones; secondaries transfer them).
func (s *snapshot) zones() map[string]*zone {
	out := map[string]*zone{}
	add := func(view string, st namedconf.Stmt) {
		z := &zone{view: view, name: strings.ToLower(strings.TrimSuffix(st.Arg(1), "."))}
		if z.name == "" {
			z.name = "."
		}
		for _, b := range st.Body {
			switch b.Name() {
			case "type":
				z.typ = b.Arg(1)
			case "file":
				z.file = b.Arg(1)
				continue
			}
			z.conf = append(z.conf, formatStmt(b)...)
		}
		sort.Strings(z.conf)
		out[zoneID(view, z.name)] = z
	}
	for _, st := range s.conf[rolePrimary] {
		switch st.Name() {
		case "zone":
			add("", st)
		case "view":
			for _, b := range st.Body {
				if b.Name() == "zone" {
					add(st.Arg(1), b)
				}
			}
		}
	}
	seeds := map[string]string{}
	refresh := map[string]bool{}
	dyn := map[string]bool{}
	if s.agent != nil {
		for _, sz := range s.agent.SeedZones {
			seeds[sz.Dest] = sz.Source
			refresh[sz.Dest] = sz.Refresh
		}
		for _, dz := range s.agent.DynamicZones {
			dyn[zoneID(dz.View, strings.ToLower(dz.Zone))] = true
		}
	}
	for id, z := range out {
		file := z.file
		z.apply = applyXfr
		if vocab.ZoneType(z.typ) == "primary" {
			z.apply = applyReload
			if src, ok := seeds[file]; ok {
				file = src
				z.apply = applySeed
				if refresh[z.file] {
					// an inline-signed zone: the agent copies the new
					// raw file over the seeded one, named re-signs on
					// reload.
					z.apply = applyReload
				}
				if dyn[id] {
					z.apply = applyUpdate
				}
			}
		}
		if z.apply == applyXfr {
			continue
		}
		if _, ok := s.files.Raw(file); !ok {
			z.err = fmt.Errorf("zone file %s is not in any zones ConfigMap", file)
			continue
		}
		if z.text, z.err = s.files.File(file); z.err != nil {
			z.err = fmt.Errorf("%s: %w", file, z.err)
		}
		z.path = file
	}
	return out
}

// parse reads the zone's text into RRsets (once).
func (z *zone) parse() {
	if z.parsed || z.err != nil || z.text == nil {
		return
	}
	z.parsed = true
	z.rrsets, z.soa, z.err = parseZone(z.name, z.path, z.text)
}

func zoneID(view, name string) string {
	if view == "" {
		return name
	}
	return view + "/" + name
}

// addRR adds rr to its RRset in sets; an SOA is returned instead (a zone
// holds one, an AXFR carries it twice).
func addRR(sets map[rrKey]*rrset, rr dns.RR) *dns.SOA {
	if soa, ok := rr.(*dns.SOA); ok {
		return soa
	}
	h := rr.Header()
	k := rrKey{name: dns.CanonicalName(h.Name), typ: h.Rrtype}
	set := sets[k]
	if set == nil {
		// BIND gives an RRset the TTL of its first record.
		set = &rrset{owner: h.Name, ttl: h.Ttl}
		sets[k] = set
	}
	set.values = append(set.values, Rdata(rr))
	return nil
}

// parseZone reads a rendered zone file (its $INCLUDEs spliced) with
// miekg/dns.
func parseZone(origin, file string, text []byte) (map[rrKey]*rrset, *dns.SOA, error) {
	zp := dns.NewZoneParser(bytes.NewReader(text), dns.Fqdn(origin), file)
	sets := map[rrKey]*rrset{}
	var soa *dns.SOA
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		if v := addRR(sets, rr); v != nil {
			soa = v
		}
	}
	if err := zp.Err(); err != nil {
		return nil, nil, err
	}
	for _, set := range sets {
		sort.Strings(set.values)
		set.values = slices.Compact(set.values)
	}
	return sets, soa, nil
}

// Rdata is an RR's presentation format without its header: the header is
// "owner<TAB>ttl<TAB>class<TAB>type<TAB>" (a tab in a name is escaped), so
// the rdata follows the fourth tab.
func Rdata(rr dns.RR) string {
	s := rr.String()
	for range 4 {
		i := strings.IndexByte(s, '\t')
		if i < 0 {
			return strings.TrimPrefix(rr.String(), rr.Header().String())
		}
		s = s[i+1:]
	}
	return s
}

// formatStmt flattens a statement into lines: a block's children each on a
// line prefixed with the block's head ("options > recursion no;"), a simple
// statement as named.conf would write it.
func formatStmt(st namedconf.Stmt) []string {
	if !st.Block || !container(st.Name()) {
		if st.Block { // one line: match-clients { a; b; };
			st = namedconf.Stmt{Words: append(append([]namedconf.Word(nil), st.Words...), namedconf.L(st.Body...))}
		}
		b, err := namedconf.Format(st)
		if err != nil {
			return []string{fmt.Sprintf("(unprintable statement %q)", st.Name())}
		}
		return []string{strings.TrimSpace(string(b))}
	}
	head := strings.TrimSuffix(strings.TrimSpace(formatHead(st)), ";")
	if len(st.Body) == 0 {
		return []string{head + " { }"}
	}
	var out []string
	for _, b := range st.Body {
		for _, l := range formatStmt(b) {
			out = append(out, head+" > "+l)
		}
	}
	return out
}

// container names the blocks the plan opens, one line per statement
// inside ("options > recursion no;"). Every other block is one line
// (match-clients { a; b; };): address match lists and server lists are read
// in order by BIND (the first match wins), so a reordering must show.
func container(name string) bool {
	switch name {
	case "options", "view", "zone", "logging", "channel", "controls", "statistics-channels", "rate-limit",
		"dnssec-policy", "key", "server", "catalog-zones":
		return true
	}
	return false
}

func formatHead(st namedconf.Stmt) string {
	b, err := namedconf.Format(namedconf.Stmt{Words: st.Words})
	if err != nil {
		return st.Name()
	}
	return string(b)
}
