// Command fn-validate is the bind-fn KRM validator: it checks every
// invariant, reports each problem with its object, field path and file, and
// never changes an item.
package main

import (
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"git.unkin.net/unkin/bind-fn/internal/krm"
)

func main() {
	if err := fn.AsMain(fn.ResourceListProcessorFunc((&krm.Processor{Mode: krm.ValidateMode}).Process)); err != nil {
		os.Exit(1)
	}
}
