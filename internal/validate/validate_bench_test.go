package validate_test

import (
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/validate"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// BenchmarkCheck runs every invariant over a decoded, resolved package.
func BenchmarkCheck(b *testing.B) {
	for _, n := range gen.BenchSizes {
		set, _ := model.Decode(gen.BenchItems(b, n))
		clusters, _ := model.Build(set)
		b.Run(gen.BenchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if rs := validate.Check(set, clusters, &prior.Previous{}, &zonefile.Cache{}); rs.HasErrors() {
					b.Fatal(rs)
				}
			}
		})
	}
}
