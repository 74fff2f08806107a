package testenv

import (
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRead(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		reason string
		env    string
		read   func(t testing.TB) any
		want   any
	}{
		"IntUnset":   {"unset is the default", "", func(t testing.TB) any { return Int(t, "BINDFN_TESTENV", 24) }, 24},
		"IntSet":     {"digits", "7000000", func(t testing.TB) any { return Int(t, "BINDFN_TESTENV", 24) }, 7000000},
		"RateUnset":  {"unset is the default", "", func(t testing.TB) any { return Rate(t, "BINDFN_TESTENV", 0.3) }, 0.3},
		"RateSet":    {"a probability", "0.5", func(t testing.TB) any { return Rate(t, "BINDFN_TESTENV", 0.3) }, 0.5},
		"UntilUnset": {"no end", "", func(t testing.TB) any { return Until(t, "BINDFN_TESTENV", start) }, time.Time{}},
		"UntilSet":   {"start plus the duration", "40m", func(t testing.TB) any { return Until(t, "BINDFN_TESTENV", start) }, start.Add(40 * time.Minute)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("BINDFN_TESTENV", tc.env)
			if diff := cmp.Diff(tc.want, tc.read(t)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestBadValue: a value it cannot read fails the test, naming the variable.
func TestBadValue(t *testing.T) {
	cases := map[string]struct {
		reason string
		env    string
		read   func(t testing.TB)
	}{
		"Int":   {"not a number", "many", func(t testing.TB) { Int(t, "BINDFN_TESTENV", 1) }},
		"Rate":  {"above 1", "1.5", func(t testing.TB) { Rate(t, "BINDFN_TESTENV", 0.3) }},
		"Until": {"no unit", "40", func(t testing.TB) { Until(t, "BINDFN_TESTENV", time.Now()) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("BINDFN_TESTENV", tc.env)
			r := &recorder{TB: t}
			done := make(chan struct{})
			go func() { defer close(done); tc.read(r) }()
			<-done
			if !r.failed {
				t.Errorf("%s: %q was read without a failure", tc.reason, tc.env)
			}
		})
	}
}

// recorder notes a Fatalf instead of failing (the goroutine ends there).
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(string, ...any) {
	r.failed = true
	runtime.Goexit()
}
