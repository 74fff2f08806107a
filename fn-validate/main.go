// Command fn-validate is the bind-fn KRM validator: it checks every
// invariant, reports each problem with its object, field path and file, and
// never changes an item.
package main

import (
	"os"
	"runtime/debug"

	"git.unkin.net/unkin/bind-fn/internal/krm"
)

// gcPercent is the GC target unless GOGC is set: a short-lived process
// that allocates much garbage, so fewer collections (measured at 100k
// records: about 10 % less CPU for about 30 % more peak RSS; BENCHMARKS.md).
const gcPercent = 200

const summary = "Validate bind.unkin.net resources: every problem reported at once, with its\nobject, field path and file; no item is ever changed."

// krm.Main is fn.AsMain with a ResourceList codec that cuts the items (see
// internal/krm/cut.go): the same protocol, a fraction of the memory.
func main() {
	if code, run := krm.Args("fn-validate", summary, os.Args[1:], os.Stdout, os.Stderr); !run {
		os.Exit(code)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if err := krm.Main(&krm.Processor{Mode: krm.ValidateMode, Files: krm.PackageFile}); err != nil {
		os.Exit(krm.ExitError)
	}
}
