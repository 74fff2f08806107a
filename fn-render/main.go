// Command fn-render is the bind-fn KRM function for kpt pipelines and
// kustomize transformers: BIND resources in, a StatefulSet, Services,
// ConfigMaps and Secrets out. On any error it emits the results and changes
// nothing.
package main

import (
	"os"

	"git.unkin.net/unkin/bind-fn/internal/krm"
)

const summary = "Render BIND 9 clusters: bind.unkin.net resources in, the StatefulSet, Services,\nConfigMaps and Secrets of each BindCluster out. On an error nothing changes."

// krm.Main is fn.AsMain with a ResourceList codec that cuts the items (see
// internal/krm/cut.go): the same protocol, a fraction of the memory.
func main() {
	if code, run := krm.Args("fn-render", summary, os.Args[1:], os.Stdout, os.Stderr); !run {
		os.Exit(code)
	}
	if err := krm.Main(&krm.Processor{Mode: krm.RenderMode, Files: krm.PackageFile}); err != nil {
		os.Exit(krm.ExitError)
	}
}
