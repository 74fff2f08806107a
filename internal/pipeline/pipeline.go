// Package pipeline is the one path every adapter takes: decode the user's
// objects, resolve them into clusters, check every invariant, render. fn-render,
// fn-validate and the Crossplane function differ only in how they read input
// and report results.
package pipeline

import (
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/validate"
)

// Input is what an adapter hands over.
type Input struct {
	// Items are the bind.unkin.net objects.
	Items []model.Item
	// Previous are objects of a previous render (label
	// app.kubernetes.io/managed-by: bind-fn), for key material and serials.
	Previous []render.PrevObject
}

// Run decodes, resolves, validates and renders. When any result is an error
// the objects are nil: callers must emit the results and change nothing.
func Run(in Input, opt render.Options) ([]render.Object, diag.Results) {
	set, rs := model.Decode(in.Items)
	clusters, brs := model.Build(set)
	rs = append(rs, brs...)
	prev := &render.Previous{}
	for _, p := range in.Previous {
		rs = append(rs, prev.Add(p)...)
	}
	// Every zone is built once, in parallel, for the validator and the renderer.
	prev.BuildZones(clusters)
	rs = append(rs, validate.Check(set, clusters, prev)...)
	if rs.HasErrors() {
		rs.Sort()
		return nil, dedupe(rs)
	}
	objs, rrs := render.Render(clusters, prev, opt)
	rs = append(rs, rrs...)
	rs = append(rs, validate.CheckRendered(clusters, objs)...)
	rs.Sort()
	rs = dedupe(rs)
	if rs.HasErrors() {
		return nil, rs
	}
	return objs, rs
}

// dedupe drops repeated results (the same problem found by two roles'
// renders, say). rs must be sorted.
func dedupe(rs diag.Results) diag.Results {
	out := rs[:0]
	for i, r := range rs {
		if i > 0 && r == rs[i-1] {
			continue
		}
		out = append(out, r)
	}
	return out
}
