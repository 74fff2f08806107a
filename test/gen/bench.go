package gen

import (
	"fmt"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
)

// BenchSizes are the record counts the `go test -bench` benchmarks run at:
// large enough to show how cost grows, small enough for go test.
var BenchSizes = []int{1000, 10000}

// BenchOptions is the package the benchmarks use for n records: one zone
// per 100 records, two views, 10% DNSRecords.
func BenchOptions(n int) Options {
	return Options{Zones: max(1, n/100), Records: n, Seed: 1, Views: 2}
}

// BenchItems generates the benchmark package of n records as pipeline
// items, failing b on error.
func BenchItems(b testing.TB, n int) []model.Item {
	b.Helper()
	items, err := Generate(BenchOptions(n)).Items()
	if err != nil {
		b.Fatal(err)
	}
	return items
}

// BenchName is the sub-benchmark name for n records ("records=10000").
func BenchName(n int) string { return fmt.Sprintf("records=%d", n) }
