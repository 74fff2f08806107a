package mapkeys

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnion(t *testing.T) {
	cases := map[string]struct {
		reason string
		a, b   map[string]int
		want   []string
	}{
		"both":  {reason: "keys of both maps, each once, sorted", a: map[string]int{"b": 1, "a": 1}, b: map[string]int{"c": 1, "a": 2}, want: []string{"a", "b", "c"}},
		"empty": {reason: "nil maps give nothing"},
		"one":   {reason: "one map alone", a: map[string]int{"z": 1}, want: []string{"z"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Union(tc.a, tc.b)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
