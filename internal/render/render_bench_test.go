package render_test

import (
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

func benchClusters(b *testing.B, n int) []*model.Cluster {
	set, _ := model.Decode(gen.BenchItems(b, n))
	clusters, rs := model.Build(set)
	if rs.HasErrors() {
		b.Fatal(rs)
	}
	return clusters
}

// BenchmarkNamedConf renders both roles' named.conf (without zone files).
func BenchmarkNamedConf(b *testing.B) {
	for _, n := range gen.BenchSizes {
		clusters := benchClusters(b, n)
		b.Run(gen.BenchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, c := range clusters {
					if _, _, rs := render.NamedConfs(c); rs.HasErrors() {
						b.Fatal(rs)
					}
				}
			}
		})
	}
}

// BenchmarkRender renders every object: zone files, sharding, named.conf,
// agent config, workload and Secrets.
func BenchmarkRender(b *testing.B) {
	for _, n := range gen.BenchSizes {
		clusters := benchClusters(b, n)
		b.Run(gen.BenchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, rs := render.Render(clusters, nil, nil, render.Options{Rand: &testutil.DetRand{}}); rs.HasErrors() {
					b.Fatal(rs)
				}
			}
		})
	}
}
