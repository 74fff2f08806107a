// Package testenv reads the knobs a long test takes from the environment
// (how many seeds, the first seed, a rate, how long to run), each a clear
// failure when set to something it cannot read. It is a leaf: the package
// differential (test/differential) and the agent differential
// (test/multipod) both read their knobs through it.
package testenv

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// Int is the integer in the environment variable name, def when unset.
func Int(t testing.TB, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// Rate is the probability (0..1) in name, def when unset.
func Rate(t testing.TB, name string, def float64) float64 {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 {
		t.Fatalf("%s=%q: want a probability 0..1", name, s)
	}
	return f
}

// Until is the time the duration in name (40m) ends, counted from start;
// the zero time when unset (no end).
func Until(t testing.TB, name string, start time.Time) time.Time {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return time.Time{}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return start.Add(d)
}
