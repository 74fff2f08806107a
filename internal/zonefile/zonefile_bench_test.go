package zonefile_test

import (
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// BenchmarkBuildText builds every zone of the package (parse, check, sort,
// hash) and prints its file.
func BenchmarkBuildText(b *testing.B) {
	for _, n := range gen.BenchSizes {
		set, _ := model.Decode(gen.BenchItems(b, n))
		clusters, _ := model.Build(set)
		var zones []*model.Zone
		for _, c := range clusters {
			for _, v := range c.Views {
				zones = append(zones, v.Zones...)
			}
		}
		b.Run(gen.BenchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, z := range zones {
					built, rs := zonefile.Build(z)
					if built == nil {
						b.Fatal(rs)
					}
					_ = built.Text(1)
				}
			}
		})
	}
}
