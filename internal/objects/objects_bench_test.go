package objects_test

import (
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// BenchmarkObjects builds the workload objects and a zones ConfigMap of
// about 64 bytes per record, and serialises them as YAML (what the KRM
// adapter does for every rendered object).
func BenchmarkObjects(b *testing.B) {
	for _, n := range gen.BenchSizes {
		set, _ := model.Decode(gen.BenchItems(b, n))
		clusters, _ := model.Build(set)
		c := clusters[0]
		zone := strings.Repeat("host-1.zone0.example.com.\t3600\tIN\tA\t198.18.0.1\n", n)
		b.Run(gen.BenchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, o := range []any{
					objects.StatefulSet(c, objects.PodPlan{ZoneConfigMaps: []string{"gen-zones-0"}}),
					objects.HeadlessService(c), objects.PrimaryService(c), objects.ServeService(c),
					objects.PodDisruptionBudget(c),
					objects.ConfigMap(c, "gen-zones-0", "zones", map[string]string{"db.zone0.example.com": zone}, nil),
				} {
					if _, err := objects.YAML(o); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
