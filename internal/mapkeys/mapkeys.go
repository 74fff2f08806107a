// Package mapkeys holds the one helper three packages (pipeline, plan,
// importer) need to walk two maps in a stable order.
package mapkeys

import (
	"maps"
	"slices"
)

// Union is every key of a and b once, sorted.
func Union[V any](a, b map[string]V) []string {
	out := slices.Collect(maps.Keys(a))
	out = append(out, slices.Collect(maps.Keys(b))...)
	slices.Sort(out)
	return slices.Compact(out)
}
