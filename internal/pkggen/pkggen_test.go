package pkggen

import (
	"bytes"
	"os"
	"testing"
)

// TestDeterministic: the same seed gives the same bytes.
func TestDeterministic(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		a := Generate(seed, Options{MistakeRate: 0.3}).YAML()
		b := Generate(seed, Options{MistakeRate: 0.3}).YAML()
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d: two generations differ", seed)
		}
	}
	if os.Getenv("PKGGEN_DUMP") != "" {
		os.Stdout.Write(Generate(1, Options{MistakeRate: 0.3}).YAML())
	}
}
