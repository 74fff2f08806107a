// Command fn-validate is the bind-fn KRM validator: it checks every
// invariant, reports each problem with its object, field path and file, and
// never changes an item.
package main

import (
	"os"

	"git.unkin.net/unkin/bind-fn/internal/krm"
)

// krm.Main is fn.AsMain with a streaming ResourceList codec (see
// internal/krm/stream.go): the same protocol, a fraction of the memory.
func main() {
	if err := krm.Main(&krm.Processor{Mode: krm.ValidateMode}); err != nil {
		os.Exit(1)
	}
}
