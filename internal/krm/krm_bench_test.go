package krm_test

import (
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"git.unkin.net/unkin/bind-fn/internal/krm"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// BenchmarkProcessor is fn-render and fn-validate in process: ResourceList
// bytes in, ResourceList bytes out, through the cutting codec the binaries
// use (cut) and through the SDK's fn.Run (sdk), for comparison.
func BenchmarkProcessor(b *testing.B) {
	for _, mode := range []struct {
		name string
		mode krm.Mode
	}{{"render", krm.RenderMode}, {"validate", krm.ValidateMode}} {
		for _, n := range gen.BenchSizes {
			in := gen.Generate(gen.BenchOptions(n)).ResourceList()
			for _, path := range []string{"cut", "sdk"} {
				b.Run(mode.name+"/"+path+"/"+gen.BenchName(n), func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(len(in)))
					for b.Loop() {
						p := &krm.Processor{Mode: mode.mode, Rand: &testutil.DetRand{}}
						var err error
						if path == "cut" {
							_, err = p.Run(in)
						} else {
							_, err = fn.Run(fn.ResourceListProcessorFunc(p.Process), in)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
