package krm_test

import (
	"os"
	"path/filepath"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/krm"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// BenchmarkTiny is one kpt render of a small package (the operator's
// manifests: one cluster, a few zones) through the path fn-render takes.
func BenchmarkTiny(b *testing.B) {
	in, err := os.ReadFile(filepath.Join("testdata", "operator-manifests.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		mode krm.Mode
	}{{"render", krm.RenderMode}, {"validate", krm.ValidateMode}} {
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (&krm.Processor{Mode: mode.mode, Rand: &testutil.DetRand{}}).Run(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
