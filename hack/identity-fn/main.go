// Command identity-fn is the IO floor of the whole-process benchmark
// (hack/bench.sh): a KRM function on the same SDK as fn-render that reads
// the ResourceList and writes it back unchanged.
package main

import (
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

func main() {
	if err := fn.AsMain(fn.ResourceListProcessorFunc(func(*fn.ResourceList) (bool, error) { return true, nil })); err != nil {
		os.Exit(1)
	}
}
