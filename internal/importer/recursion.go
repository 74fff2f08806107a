package importer

import (
	"slices"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// recursionSettings are the statements of options or of one view that
// decide who may recurse and where a recursive query goes.
type recursionSettings struct {
	stmts map[string]namedconf.Located
	lists map[string][]string
}

func (r *recursionSettings) set(s namedconf.Located, els []string) {
	if r.stmts == nil {
		r.stmts, r.lists = map[string]namedconf.Located{}, map[string][]string{}
	}
	r.stmts[s.Name()] = s
	if s.Name() == "forward" {
		els = []string{strings.ToLower(s.Arg(1))}
	}
	r.lists[s.Name()] = els
}

func (r *recursionSettings) get(name string) ([]string, namedconf.Located, bool) {
	if r == nil || r.stmts == nil {
		return nil, namedconf.Located{}, false
	}
	s, ok := r.stmts[name]
	return r.lists[name], s, ok
}

// lookup is a setting as BIND finds it for a view: the view's statement,
// else options'.
func lookup(view, opts *recursionSettings, name string) ([]string, namedconf.Located, bool) {
	if l, s, ok := view.get(name); ok {
		return l, s, true
	}
	return opts.get(name)
}

// allowRecursion is who may recurse in a view, by BIND's defaults
// (lib/bind9, named/server.c): allow-recursion, else allow-query-cache,
// else allow-query, else localnets and localhost (bind-fn's default, nil).
func allowRecursion(view, opts *recursionSettings) ([]string, namedconf.Located) {
	for _, n := range []string{"allow-recursion", "allow-query-cache", "allow-query"} {
		if l, s, ok := lookup(view, opts, n); ok {
			return l, s
		}
	}
	return nil, namedconf.Located{}
}

// resolveRecursion decides the cluster's mode and the recursion settings
// of the recursive views. allow-recursion is carried per view. bind-fn has
// one forwarders list per cluster (options), which every view inherits: a
// configuration whose recursive views agree is carried exactly; one whose
// views differ is a loss at each differing statement, and the cluster
// takes the first recursive view's.
func (im *importer) resolveRecursion(recursion bool, views []viewStmt) {
	sp := &im.cluster.Spec
	sp.Mode = v1alpha1.ModeAuthoritative
	type recView struct {
		name string
		obj  *v1alpha1.BindView
	}
	var rec []recView
	if len(views) == 0 {
		if !recursion {
			return
		}
		rec = append(rec, recView{})
	}
	var quiet []*v1alpha1.BindView
	for _, o := range im.res.Objects["views.yaml"] {
		v := o.(*v1alpha1.BindView)
		name := v.Spec.ViewName
		if name == "" {
			name = v.Name
		}
		r := recursion // a view without its own statement inherits options'
		if v.Spec.Recursion != nil {
			r = *v.Spec.Recursion
		} else if r {
			v.Spec.Recursion = &r
		}
		if r {
			rec = append(rec, recView{name, v})
		} else {
			quiet = append(quiet, v)
		}
	}
	if len(rec) == 0 {
		return
	}
	// An authoritative bind-fn render with recursive views stays
	// authoritative: its views' allow-recursion is the cluster's
	// spec.allowRecursion, which the render wrote into each of them.
	bindfnAuth := im.bindfn && !recursion
	if !bindfnAuth {
		// Recursion somewhere: a resolver cluster. Views that do not
		// recurse say so themselves (their Recursion is set above).
		sp.Mode = v1alpha1.ModeResolver
		for _, v := range quiet {
			no := false
			v.Spec.Recursion = &no
		}
	}
	first := func(name string, get func(v *recursionSettings) ([]string, namedconf.Located, bool)) ([]string, bool) {
		var val []string
		var set bool
		for i, r := range rec {
			l, s, ok := get(im.viewRec[r.name])
			if i == 0 {
				val, set = l, ok
				continue
			}
			if ok != set || !slices.Equal(l, val) {
				what := "view " + r.name + ": " + name + " " + strings.Join(l, "; ")
				if !ok {
					what = "view " + r.name + ": no " + name
				}
				where := s.Where()
				if !ok {
					where = views[0].stmt.Where()
					for _, v := range views {
						if v.name == r.name {
							where = v.stmt.Where()
						}
					}
				}
				im.res.Losses = append(im.res.Losses, Loss{Where: where, What: clip(what), Why: "bind-fn has one " + name + " per cluster, which every view inherits: the recursive views differ, and the cluster takes view " + rec[0].name + "'s (" + strings.Join(val, "; ") + ")"})
			}
		}
		return val, set
	}
	// allow-recursion is read per view by BIND and by bind-fn (BindView
	// spec.allowRecursion): the cluster takes the first recursive view's,
	// every view that differs carries its own (BIND's default, localnets
	// and localhost, written out where the view has none).
	var ar []string
	for i, r := range rec {
		l, s := allowRecursion(im.viewRec[r.name], im.optRec)
		if s.Name() == "" {
			l = nil
		}
		if i == 0 {
			ar = l
			continue
		}
		if !slices.Equal(l, ar) && r.obj != nil {
			if len(l) == 0 {
				l = []string{"localnets", "localhost"}
			}
			r.obj.Spec.AllowRecursion = l
		}
	}
	if !(len(ar) == 1 && ar[0] == "none") {
		sp.AllowRecursion = ar
	}
	if bindfnAuth {
		return
	}
	fw, _ := first("forwarders", func(v *recursionSettings) ([]string, namedconf.Located, bool) {
		return lookup(v, im.optRec, "forwarders")
	})
	sp.Forwarders = fw
	fo, _ := first("forward", func(v *recursionSettings) ([]string, namedconf.Located, bool) {
		return lookup(v, im.optRec, "forward")
	})
	sp.ForwardOnly = len(fo) == 1 && fo[0] == "only"
}
