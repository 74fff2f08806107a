// Command fn-render is the bind-fn KRM function for kpt pipelines and
// kustomize transformers: BIND resources in, a StatefulSet, Services,
// ConfigMaps and Secrets out. On any error it emits the results and changes
// nothing.
package main

import (
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"git.unkin.net/unkin/bind-fn/internal/krm"
)

func main() {
	if err := fn.AsMain(fn.ResourceListProcessorFunc((&krm.Processor{Mode: krm.RenderMode}).Process)); err != nil {
		os.Exit(1)
	}
}
