package model

import (
	"fmt"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// AML is an address match list, parsed: order kept (the first match wins).
type AML []nc.AMLElement

// Servers is a list of server entries (primaries, also-notify, forwarders).
type Servers []nc.ServerEntry

// parseAML parses a user address match list; each bad element is a located
// error (field[i]) and is left out.
func parseAML(rs *diag.Results, src diag.Source, field string, elems []string) AML {
	var out AML
	for i, s := range elems {
		e, err := nc.ParseElement(s)
		if err != nil {
			rs.Errorf(src, fmt.Sprintf("%s[%d]", field, i), "%v", err)
			continue
		}
		out = append(out, e)
	}
	return out
}

// parseServers parses user server entries the same way.
func parseServers(rs *diag.Results, src diag.Source, field string, entries []string) Servers {
	var out Servers
	for i, s := range entries {
		e, err := nc.ParseServerEntry(s)
		if err != nil {
			rs.Errorf(src, fmt.Sprintf("%s[%d]", field, i), "%v", err)
			continue
		}
		out = append(out, e)
	}
	return out
}

// Stmts renders the list's elements.
func (l AML) Stmts() []nc.Stmt {
	out := make([]nc.Stmt, 0, len(l))
	for _, e := range l {
		out = append(out, e.Stmt())
	}
	return out
}

// AdmitsAll reports whether the list starts with "any".
func (l AML) AdmitsAll() bool {
	return len(l) > 0 && !l[0].Negated && l[0].Builtin == "any"
}
