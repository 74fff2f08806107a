package model_test

import (
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// BenchmarkDecodeBuild decodes the items and resolves them into clusters.
func BenchmarkDecodeBuild(b *testing.B) {
	for _, n := range gen.BenchSizes {
		items := gen.BenchItems(b, n)
		b.Run(gen.BenchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				set, rs := model.Decode(items)
				_, brs := model.Build(set)
				if rs.HasErrors() || brs.HasErrors() {
					b.Fatal(rs, brs)
				}
			}
		})
	}
}
