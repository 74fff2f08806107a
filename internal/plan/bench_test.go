package plan_test

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// ttlLine is a DNSRecord's spec.ttl line.
var ttlLine = regexp.MustCompile(`(?m)^(  )ttl: .*\n`)

// bigChange is the benchmark's package: records RRsets (test/gen, 20
// zones, two views, 10% DNSRecords), rendered as kpt leaves it, and the new
// inputs with changed DNSRecords: a third get a new TTL, a third are
// removed, a third move to a new owner name (a removal and an addition).
func bigChange(tb testing.TB, records, changed int) (oldPkg, newPkg *plan.Package) {
	tb.Helper()
	g := gen.Generate(gen.Options{Zones: 20, Records: records, Seed: 1, Views: 2})
	oldPkg, newPkg = &plan.Package{}, &plan.Package{}
	for _, f := range g.FileNames() {
		if err := oldPkg.AddFile(f, g.File(f)); err != nil {
			tb.Fatal(err)
		}
	}
	docs := g.Files["records.yaml"]
	if len(docs) < changed {
		tb.Fatalf("only %d DNSRecords to change", len(docs))
	}
	edited := append([]string(nil), docs...)
	var keep []string
	for i, d := range edited {
		switch {
		case i >= changed:
			keep = append(keep, d)
		case i%3 == 0:
			// A new TTL: the existing ttl replaced, never a second ttl key
			// (which fn-render, and so plan, refuse).
			if ttlLine.MatchString(d) {
				keep = append(keep, ttlLine.ReplaceAllString(d, "${1}ttl: 123\n"))
			} else {
				keep = append(keep, strings.Replace(d, "  values:\n", "  ttl: 123\n  values:\n", 1))
			}
		case i%3 == 1: // removed
		default:
			keep = append(keep, strings.Replace(d, "  name: \"", "  name: \"moved-", 1))
		}
	}
	g.Files["records.yaml"] = keep
	for _, f := range g.FileNames() {
		if err := newPkg.AddFile(f, g.File(f)); err != nil {
			tb.Fatal(err)
		}
	}
	objs, rs := pipeline.Run(pipeline.Input{Items: oldPkg.Items}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		tb.Fatal(rs)
	}
	var err error
	if oldPkg.Rendered, err = plan.FromRender(objs); err != nil {
		tb.Fatal(err)
	}
	oldPkg.Items = nil
	return oldPkg, newPkg
}

// BenchmarkPlan is the target: a change of 10,000 records in a
// 200,000-record package, planned (new inputs rendered with the old output
// as previous, both renders compared, Markdown and JSON written) in < 2 s.
func BenchmarkPlan(b *testing.B) {
	for _, size := range []struct{ records, changed int }{{20000, 1000}, {200000, 10000}} {
		b.Run(fmt.Sprintf("records=%d/changed=%d", size.records, size.changed), func(b *testing.B) {
			oldPkg, newPkg := bigChange(b, size.records, size.changed)
			b.ResetTimer()
			cpu0 := cpuTime()
			defer func() { b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op") }()
			for range b.N {
				t0 := time.Now()
				sides, err := plan.Prepare(oldPkg, newPkg, &testutil.DetRand{})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				p, err := plan.Compare(sides.Old, sides.New)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.JSON(); err != nil {
					b.Fatal(err)
				}
				_ = p.Markdown(plan.DefaultLimits)
				t2 := time.Now()
				t := p.Totals
				if got := t.RRsetsAdded + t.RRsetsChanged + t.RRsetsRemoved; got < size.changed {
					b.Fatalf("plan counts %d RRset changes, want at least %d", got, size.changed)
				}
				b.ReportMetric(t1.Sub(t0).Seconds(), "render-s/op")
				b.ReportMetric(t2.Sub(t1).Seconds(), "compare-s/op")
			}
		})
	}
}

// BenchmarkPlanRendered is `bind-fn plan --rendered`: both sides already
// rendered (kpt fn render ran), compared and written as Markdown and JSON.
func BenchmarkPlanRendered(b *testing.B) {
	for _, size := range []struct{ records, changed int }{{20000, 1000}, {200000, 10000}} {
		b.Run(fmt.Sprintf("records=%d/changed=%d", size.records, size.changed), func(b *testing.B) {
			oldPkg, newPkg := bigChange(b, size.records, size.changed)
			sides, err := plan.Prepare(oldPkg, newPkg, &testutil.DetRand{})
			if err != nil {
				b.Fatal(err)
			}
			newPkg = &plan.Package{Rendered: sides.New}
			b.ResetTimer()
			cpu0 := cpuTime()
			defer func() { b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op") }()
			for range b.N {
				s, err := plan.Rendered(oldPkg, newPkg)
				if err != nil {
					b.Fatal(err)
				}
				p, err := plan.Compare(s.Old, s.New)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.JSON(); err != nil {
					b.Fatal(err)
				}
				_ = p.Markdown(plan.DefaultLimits)
				if t := p.Totals; t.RRsetsAdded+t.RRsetsChanged+t.RRsetsRemoved < size.changed {
					b.Fatalf("plan counts %+v, want at least %d RRset changes", t, size.changed)
				}
			}
		})
	}
}

// cpuTime is the process's user + system CPU time: on this shared machine
// wall time under load is several times the CPU a run needs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
