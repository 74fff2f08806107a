// Command xfn-bench is the Crossplane leg of hack/bench.sh: the bind-fn
// composition function's RunFunction in a process of its own, on the same
// generated package as fn-render.
//
//	xfn-bench -request < rl.yaml > req.pb   # the package as an XBindCluster request
//	xfn-bench < req.pb > rsp.pb             # decode, RunFunction, encode
//
// The second form is what the measurement times: a serialized
// RunFunctionRequest in, a serialized response out, as the gRPC server
// would see them (without the transport). Every object of the package goes
// inline into the XR (spec.views, spec.zones, spec.records); the required
// resources are answered empty. The response size cap is lifted: at 100k
// records neither the XR (etcd: 1.5 MiB) nor the response (gRPC: 4 MiB by
// default) would fit a real Crossplane, which BENCHMARKS.md says.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/xfn"
)

func main() {
	mk := flag.Bool("request", false, "read a ResourceList, write a RunFunctionRequest")
	flag.Parse()
	in, err := io.ReadAll(os.Stdin)
	if err == nil {
		var out []byte
		if *mk {
			out, err = request(in)
		} else {
			out, err = run(in)
		}
		if err == nil {
			_, err = os.Stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "xfn-bench: %v\n", err)
		os.Exit(1)
	}
}

var lists = map[string]string{"BindView": "views", "BindZone": "zones", "DNSRecord": "records"}

func request(in []byte) ([]byte, error) {
	rl, err := fn.ParseResourceList(in)
	if err != nil {
		return nil, err
	}
	spec := map[string]any{}
	name, ns := "", ""
	for _, o := range rl.Items {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(o.String()), &m); err != nil {
			return nil, err
		}
		s, _ := m["spec"].(map[string]any)
		delete(s, "clusterRef")
		switch k := o.GetKind(); k {
		case "BindCluster":
			name, ns = o.GetName(), o.GetNamespace()
			for f, v := range s {
				spec[f] = v
			}
		default:
			l, ok := lists[k]
			if !ok {
				return nil, fmt.Errorf("kind %s has no inline list here", k)
			}
			items, _ := spec[l].([]any)
			spec[l] = append(items, map[string]any{"name": o.GetName(), "spec": s})
		}
	}
	xr := map[string]any{"apiVersion": xfn.APIVersion, "kind": xfn.Kind, "metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}
	st, err := structpb.NewStruct(xr)
	if err != nil {
		return nil, err
	}
	req := &fnv1.RunFunctionRequest{
		Meta:              &fnv1.RequestMeta{Tag: "bench"},
		Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: st}},
		RequiredResources: map[string]*fnv1.Resources{xfn.RequiredZones: {}, xfn.RequiredRecords: {}},
	}
	return proto.Marshal(req)
}

func run(in []byte) ([]byte, error) {
	req := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(in, req); err != nil {
		return nil, err
	}
	f := &xfn.Function{MaxResponseBytes: 1 << 30}
	rsp, err := f.RunFunction(context.Background(), req)
	if err != nil {
		return nil, err
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return nil, fmt.Errorf("fatal result: %s", r.GetMessage())
		}
	}
	if len(rsp.GetDesired().GetResources()) == 0 {
		return nil, fmt.Errorf("no desired resources")
	}
	return proto.Marshal(rsp)
}
