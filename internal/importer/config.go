package importer

// The import's first phase: named.conf, parsed into located statements by
// internal/namedconf (includes expanded), is read into a typed
// configuration — which statement is what, each zone's name, class, type
// and options — before anything is mapped. The second phase (Import, and
// the file of each kind) maps that configuration to objects and losses.

import (
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// config is a named.conf as the import reads it, each kind of statement in
// file order.
type config struct {
	// options is the options block (nil without one).
	options *namedconf.Located
	// keys, acls, lists (primaries and its old name masters) and policies
	// (dnssec-policy) are what zones and views refer to.
	keys, acls, lists, policies []namedconf.Located
	views                       []viewStmt
	// zones are the zones outside every view.
	zones []zoneStmt
	// replaced are the statements bind-fn renders itself (logging,
	// controls, statistics-channels); unknown those it has no field for.
	replaced, unknown []namedconf.Located
}

// viewStmt is one view statement.
type viewStmt struct {
	stmt namedconf.Located
	name string
	// zones are the view's zones; body its other statements, in order.
	zones []zoneStmt
	body  []namedconf.Located
}

// zoneStmt is one zone statement.
type zoneStmt struct {
	stmt namedconf.Located
	// name is lower case without the final dot; "." is the root.
	name string
	// class is the class word as written ("" when none: IN).
	class string
	// typ is the zone's type as bind-fn names it (vocab.ZoneType: master
	// is primary, slave secondary).
	typ string
	// view is the view's name ("" outside views).
	view string
	// opts are the zone's options by name, order their names in file order.
	opts  map[string]namedconf.Located
	order []string
	// used are the options the zone's type consumed; the rest are mapped
	// one by one (zoneOption).
	used map[string]bool
}

// readConfig sorts the top-level statements into a config.
func readConfig(conf []namedconf.Located) config {
	var c config
	for i := range conf {
		s := conf[i]
		switch name := s.Name(); {
		case name == "options":
			c.options = &conf[i]
		case name == "key":
			c.keys = append(c.keys, s)
		case name == "acl":
			c.acls = append(c.acls, s)
		case vocab.IsPrimariesList(name):
			c.lists = append(c.lists, s)
		case name == "dnssec-policy":
			c.policies = append(c.policies, s)
		case name == "view":
			c.views = append(c.views, readView(s))
		case name == "zone":
			c.zones = append(c.zones, readZoneStmt(s, ""))
		case name == "logging" || name == "controls" || name == "statistics-channels":
			c.replaced = append(c.replaced, s)
		default:
			c.unknown = append(c.unknown, s)
		}
	}
	return c
}

// readView reads a view statement: its zones apart from its other
// statements.
func readView(s namedconf.Located) viewStmt {
	v := viewStmt{stmt: s, name: s.Arg(1)}
	for _, b := range s.Body {
		if b.Name() == "zone" {
			v.zones = append(v.zones, readZoneStmt(b, v.name))
			continue
		}
		v.body = append(v.body, b)
	}
	return v
}

// readZoneStmt reads a zone statement of view ("" outside views).
func readZoneStmt(s namedconf.Located, view string) zoneStmt {
	z := zoneStmt{stmt: s, name: strings.ToLower(strings.TrimSuffix(s.Arg(1), ".")), view: view,
		opts: map[string]namedconf.Located{}, used: map[string]bool{"type": true}}
	if z.name == "" {
		z.name = "."
	}
	if len(s.Words) > 2 {
		z.class = s.Arg(2)
	}
	for _, b := range s.Body {
		z.opts[b.Name()] = b
		z.order = append(z.order, b.Name())
	}
	z.typ = vocab.ZoneType(z.opts["type"].Arg(1))
	return z
}

// primaries is the zone's primaries list, under its current or old name.
func (z *zoneStmt) primaries() namedconf.Located {
	if p := z.opts[vocab.PrimariesList]; p.Name() != "" {
		return p
	}
	for old := range vocab.ListAliases {
		if p := z.opts[old]; p.Name() != "" {
			return p
		}
	}
	return namedconf.Located{}
}

// use marks options the zone's type consumed.
func (z *zoneStmt) use(names ...string) {
	for _, n := range names {
		z.used[n] = true
	}
}
