// Command fn-render is the bind-fn KRM function for kpt pipelines and
// kustomize transformers: BIND resources in, a StatefulSet, Services,
// ConfigMaps and Secrets out. On any error it emits the results and changes
// nothing.
package main

import (
	"os"
	"runtime/debug"

	"git.unkin.net/unkin/bind-fn/internal/krm"
)

// The GC targets unless GOGC is set: half the default while decoding and
// writing, and pipelineGC while the pipeline runs, when the most is live
// (krm.Processor.PipelineGC). Measured at 10,000 zones (BENCHMARKS.md).
const (
	gcPercent  = 50
	pipelineGC = 15
)

const summary = "Render BIND 9 clusters: bind.unkin.net resources in, the StatefulSet, Services,\nConfigMaps and Secrets of each BindCluster out. On an error nothing changes."

// krm.Main is fn.AsMain with a ResourceList codec that cuts the items (see
// internal/krm/cut.go): the same protocol, a fraction of the memory.
func main() {
	if code, run := krm.Args("fn-render", summary, os.Args[1:], os.Stdout, os.Stderr); !run {
		os.Exit(code)
	}
	p := &krm.Processor{Mode: krm.RenderMode, Files: krm.PackageFile}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
		p.PipelineGC = pipelineGC
	}
	if err := krm.Main(p); err != nil {
		os.Exit(krm.ExitError)
	}
}
