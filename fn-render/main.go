// Command fn-render is the bind-fn KRM function for kpt pipelines and
// kustomize transformers: BIND resources in, a StatefulSet, Services,
// ConfigMaps and Secrets out. On any error it emits the results and changes
// nothing.
package main

import (
	"os"

	"git.unkin.net/unkin/bind-fn/internal/krm"
)

// krm.Main is fn.AsMain with a ResourceList codec that cuts the items (see
// internal/krm/cut.go): the same protocol, a fraction of the memory.
func main() {
	if err := krm.Main(&krm.Processor{Mode: krm.RenderMode}); err != nil {
		os.Exit(1)
	}
}
