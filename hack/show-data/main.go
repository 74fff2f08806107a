// Command show-data prints one data key of one object from a ResourceList
// or a YAML stream of objects on stdin (make example uses it to show a rendered file).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

func main() {
	kind := flag.String("kind", "ConfigMap", "kind of the object")
	name := flag.String("name", "", "name of the object")
	key := flag.String("key", "", "data key to print")
	flag.Parse()
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "show-data:", err)
		os.Exit(1)
	}
	objs, err := fn.ParseKubeObjects(in)
	if rl, rerr := fn.ParseResourceList(in); rerr == nil {
		objs, err = rl.Items, nil
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "show-data:", err)
		os.Exit(1)
	}
	for _, o := range objs {
		if o.GetKind() == *kind && o.GetName() == *name {
			v, found, err := o.NestedString("data", *key)
			if err != nil || !found {
				fmt.Fprintf(os.Stderr, "show-data: %s/%s has no data key %q\n", *kind, *name, *key)
				os.Exit(1)
			}
			fmt.Print(v)
			return
		}
	}
	fmt.Fprintf(os.Stderr, "show-data: no %s/%s in the input\n", *kind, *name)
	os.Exit(1)
}
