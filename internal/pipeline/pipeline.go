// Package pipeline is the one path every adapter takes: decode the user's
// objects, resolve them into clusters, check every invariant, render. fn-render,
// fn-validate and the Crossplane function differ only in how they read input
// and report results.
package pipeline

import (
	"reflect"
	"runtime"
	"sync"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/validate"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// Input is what an adapter hands over.
type Input struct {
	// Items are the bind.unkin.net objects.
	Items []model.Item
	// Previous are objects of a previous render (label
	// app.kubernetes.io/managed-by: bind-fn), for key material and serials.
	Previous []prior.Object
}

// Run decodes, resolves, validates and renders. When any result is an error
// the objects are nil: callers must emit the results and change nothing.
// Run holds the items' JSON only until it is decoded: a caller that keeps
// no other reference to it (fn-render) frees it for the render.
func Run(in Input, opt render.Options) ([]render.Object, diag.Results) {
	set, rs := decode(in.Items)
	in.Items = nil
	clusters, brs := model.Build(set)
	rs = append(rs, brs...)
	prev, prs := prior.Read(in.Previous)
	rs = append(rs, prs...)
	// Every zone is built once, in parallel, for the validator and the renderer.
	zones := &zonefile.Cache{}
	zones.BuildAll(clusters)
	rs = append(rs, validate.Check(set, clusters, prev, zones)...)
	if rs.HasErrors() {
		rs.Sort()
		return nil, rs
	}
	objs, rrs := render.Render(clusters, prev, zones, opt)
	rs = append(rs, rrs...)
	rs.Sort()
	if rs.HasErrors() {
		return nil, rs
	}
	return objs, rs
}

// parallelDecode is the number of items from which decode splits the work.
const parallelDecode = 256

// decode is model.Decode over chunks of items in parallel (decoding is per
// item, and strict JSON decoding is a large serial cost in a big package):
// the chunks' sets are concatenated in order, field by field, and their
// results too, so the set and results are model.Decode's exactly.
func decode(items []model.Item) (*model.Set, diag.Results) {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 || len(items) < parallelDecode {
		return model.Decode(items)
	}
	// Chunks of about equal JSON size: a BindZone with inline records can
	// be thousands of times larger than a DNSRecord.
	total := 0
	for _, it := range items {
		total += len(it.JSON) + 1
	}
	per := total/(4*procs) + 1
	var chunks [][]model.Item
	start, size := 0, 0
	for i, it := range items {
		size += len(it.JSON) + 1
		if size >= per {
			chunks = append(chunks, items[start:i+1])
			start, size = i+1, 0
		}
	}
	if start < len(items) {
		chunks = append(chunks, items[start:])
	}
	sets := make([]*model.Set, len(chunks))
	rss := make([]diag.Results, len(chunks))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(procs, len(chunks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				sets[i], rss[i] = model.Decode(chunks[i])
			}
		}()
	}
	for i := range chunks {
		next <- i
	}
	close(next)
	wg.Wait()
	set := &model.Set{}
	var rs diag.Results
	out := reflect.ValueOf(set).Elem()
	for i, s := range sets {
		in := reflect.ValueOf(s).Elem()
		for f := 0; f < out.NumField(); f++ {
			// Every field of a Set is a slice of objects (TestDecodeMatches).
			if in.Field(f).Len() > 0 {
				out.Field(f).Set(reflect.AppendSlice(out.Field(f), in.Field(f)))
			}
		}
		rs = append(rs, rss[i]...)
	}
	return set, rs
}
