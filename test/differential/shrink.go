package differential

import (
	"maps"
	"slices"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/test/pkggen"
)

// step is one way to make a package smaller: drop an object, a field or a
// list element at a path inside an object's spec.
type step struct {
	obj  int
	path []any // string: map key, int: list index; empty: the whole object
}

// steps lists every reduction of p, whole objects first, then shallow
// fields before deep ones.
func steps(p pkggen.Package) []step {
	var out []step
	for i := len(p.Objects) - 1; i >= 0; i-- {
		out = append(out, step{obj: i})
	}
	var deep []step
	for i, o := range p.Objects {
		var walk func(v any, path []any)
		walk = func(v any, path []any) {
			switch x := v.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(x)) {
					pp := append(append([]any(nil), path...), k)
					deep = append(deep, step{obj: i, path: pp})
					walk(x[k], pp)
				}
			case []any:
				for j := len(x) - 1; j >= 0; j-- {
					pp := append(append([]any(nil), path...), j)
					deep = append(deep, step{obj: i, path: pp})
					walk(x[j], pp)
				}
			}
		}
		walk(o.Spec, nil)
	}
	// shallow first
	for d := 1; d <= 6; d++ {
		for _, s := range deep {
			if len(s.path) == d {
				out = append(out, s)
			}
		}
	}
	return out
}

// apply returns a copy of p with s applied, or false when s no longer fits.
func apply(p pkggen.Package, s step) (pkggen.Package, bool) {
	q := p.Clone()
	if s.obj >= len(q.Objects) {
		return q, false
	}
	if len(s.path) == 0 {
		q.Objects = append(q.Objects[:s.obj], q.Objects[s.obj+1:]...)
		return q, true
	}
	var parent any = q.Objects[s.obj].Spec
	for _, k := range s.path[:len(s.path)-1] {
		switch x := parent.(type) {
		case map[string]any:
			kk, ok := k.(string)
			if !ok {
				return q, false
			}
			parent = x[kk]
		case []any:
			kk, ok := k.(int)
			if !ok || kk >= len(x) {
				return q, false
			}
			parent = x[kk]
		default:
			return q, false
		}
	}
	last := s.path[len(s.path)-1]
	switch x := parent.(type) {
	case map[string]any:
		kk, ok := last.(string)
		if _, has := x[kk]; !ok || !has {
			return q, false
		}
		delete(x, kk)
	case []any:
		kk, ok := last.(int)
		if !ok || kk >= len(x) {
			return q, false
		}
		nl := append(append([]any(nil), x[:kk]...), x[kk+1:]...)
		// write the shorter list back into its parent
		if !setAt(q.Objects[s.obj].Spec, s.path[:len(s.path)-1], nl) {
			return q, false
		}
	default:
		return q, false
	}
	return q, true
}

func setAt(root map[string]any, path []any, v any) bool {
	var cur any = root
	for i, k := range path {
		lastStep := i == len(path)-1
		switch x := cur.(type) {
		case map[string]any:
			kk, ok := k.(string)
			if !ok {
				return false
			}
			if lastStep {
				x[kk] = v
				return true
			}
			cur = x[kk]
		case []any:
			kk, ok := k.(int)
			if !ok || kk >= len(x) {
				return false
			}
			if lastStep {
				x[kk] = v
				return true
			}
			cur = x[kk]
		default:
			return false
		}
	}
	return false
}

// Shrink reduces p while the same divergence (by signature) persists, for
// at most budget evaluations. It returns the smallest package found and
// the number of evaluations.
func Shrink(t testing.TB, p pkggen.Package, d Divergence, budget int, deadline time.Duration) (pkggen.Package, int) {
	sig := d.Signature()
	opt := Options{Named: d.Stage == StageNamed || d.Stage == StageTransfer, Transfer: d.Stage == StageTransfer, Bypass: d.Kind == RefusedLoads, FirstFailure: d.Stage != StageNamed && d.Stage != StageTransfer}
	still := func(q pkggen.Package) bool {
		nd := Classify(q.Mistakes, Check(t, q.Items(), opt))
		return nd != nil && nd.Signature() == sig
	}
	return shrinkWith(p, still, budget, deadline)
}

// shrinkWith is greedy reduction: every step of steps(p) that keeps still
// true is taken, pass after pass, until a pass changes nothing.
func shrinkWith(p pkggen.Package, still func(pkggen.Package) bool, budget int, deadline time.Duration) (pkggen.Package, int) {
	evals := 0
	stop := time.Now().Add(deadline)
	for changed := true; changed; {
		changed = false
		for _, s := range steps(p) {
			if evals >= budget || time.Now().After(stop) {
				return p, evals
			}
			q, ok := apply(p, s)
			if !ok {
				continue
			}
			evals++
			if still(q) {
				// later steps were computed on the bigger package: indices
				// may have moved, which only makes them other reductions
				p, changed = q, true
			}
		}
	}
	return p, evals
}
