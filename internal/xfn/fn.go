package xfn

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/proto"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// DefaultMaxResponseBytes is the largest response Crossplane accepts: its
// gRPC client keeps grpc-go's default receive limit of 4 MiB.
const DefaultMaxResponseBytes = 4 << 20

// ConditionRendered is the XR condition the function sets.
const ConditionRendered = "Rendered"

// Function is the bind-fn composition function.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	// Log is the function's logger (logging.NewNopLogger() when nil).
	Log logging.Logger
	// Rand is the source of new key material (crypto/rand by default).
	Rand io.Reader
	// MaxResponseBytes caps the encoded response; a bigger desired state
	// ends in a Fatal result instead of a gRPC error in Crossplane
	// (DefaultMaxResponseBytes when 0).
	MaxResponseBytes int
}

var _ fnv1.FunctionRunnerServiceServer = &Function{}

// RunFunction composes a BIND cluster from an XBindCluster.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	log := f.Log
	if log == nil {
		log = logging.NewNopLogger()
	}
	log = log.WithValues("tag", req.GetMeta().GetTag())
	rsp := response.To(req, response.DefaultTTL)

	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get observed composite resource"))
		return rsp, nil
	}
	name, ns := oxr.Resource.GetName(), oxr.Resource.GetNamespace()
	log = log.WithValues("xr", ns+"/"+name)

	rsp.Requirements = Requirements(name, ns)
	required, resolved, err := requiredItems(req, ns)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot read required resources"))
		return rsp, nil
	}
	if !resolved {
		// Crossplane calls again with the required resources; a desired
		// state now would lack their zones and records.
		log.Debug("Waiting for required resources")
		return rsp, nil
	}

	items, loc, rs := FromXR(oxr.Resource.Object)
	items = append(items, required...)

	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get observed composed resources"))
		return rsp, nil
	}
	prev, prs := Previous(observed)
	rs = append(rs, prs...)

	var objs []render.Object
	if !rs.HasErrors() {
		r := f.Rand
		if r == nil {
			r = rand.Reader
		}
		var rrs diag.Results
		objs, rrs = pipeline.Run(pipeline.Input{Items: items, Previous: prev}, render.Options{Rand: r})
		rs = append(rs, rrs...)
	}
	rs.Sort()
	if rs.HasErrors() {
		response.Fatal(rsp, errors.New(FatalMessage(loc, rs)))
		response.ConditionFalse(rsp, ConditionRendered, "InvalidSpec").WithMessage("see the Fatal result").TargetComposite()
		return rsp, nil
	}
	for _, r := range rs {
		if r.Severity == diag.Warning {
			response.Warning(rsp, errors.New(loc.Message(r))).TargetComposite()
		}
	}

	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get desired composed resources"))
		return rsp, nil
	}
	ours, err := Composed(objs, observed)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot compose rendered objects"))
		return rsp, nil
	}
	for n, d := range ours {
		desired[n] = d
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set desired composed resources"))
		return rsp, nil
	}

	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get desired composite resource"))
		return rsp, nil
	}
	dxr.Resource.SetAPIVersion(oxr.Resource.GetAPIVersion())
	dxr.Resource.SetKind(oxr.Resource.GetKind())
	if err := dxr.Resource.SetValue("status.bind", Status(name, objs, ours)); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set composite resource status"))
		return rsp, nil
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set desired composite resource"))
		return rsp, nil
	}
	response.ConditionTrue(rsp, ConditionRendered, "Available").
		WithMessage(fmt.Sprintf("%d objects rendered, %d warning(s)", len(objs), len(rsp.GetResults()))).TargetComposite()

	max := f.MaxResponseBytes
	if max <= 0 {
		max = DefaultMaxResponseBytes
	}
	if n := proto.Size(rsp); n > max {
		big := response.To(req, response.DefaultTTL)
		big.Requirements = rsp.Requirements
		response.Fatal(big, errors.Errorf("cannot return the desired state: the response would be %s, over the %s a Crossplane "+
			"function may return (gRPC's default message limit); Crossplane would fail with a gRPC error and, worse, keep no "+
			"partial state. Split the zones of %s %s/%s across several XBindClusters", mib(n), mib(max), Kind, ns, name))
		return big, nil
	}
	log.Debug("Rendered", "objects", len(objs), "bytes", proto.Size(rsp))
	return rsp, nil
}

func mib(n int) string { return fmt.Sprintf("%.2f MiB (%d bytes)", float64(n)/(1<<20), n) }

// Requirements asks for the BindZones and DNSRecords labelled for the XR.
func Requirements(name, ns string) *fnv1.Requirements {
	sel := func(kind string) *fnv1.ResourceSelector {
		return &fnv1.ResourceSelector{
			ApiVersion: v1alpha1.APIVersion,
			Kind:       kind,
			Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{SelectorLabel: name}}},
			Namespace:  proto.String(ns),
		}
	}
	return &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{
		RequiredZones:   sel(v1alpha1.KindBindZone),
		RequiredRecords: sel(v1alpha1.KindDNSRecord),
	}}
}

// requiredItems returns the required resources of the XR's namespace as
// items, sorted by kind and name; resolved is false until Crossplane has
// answered both requirements.
func requiredItems(req *fnv1.RunFunctionRequest, ns string) ([]model.Item, bool, error) {
	var items []model.Item
	for _, n := range []string{RequiredZones, RequiredRecords} {
		rrs, ok, err := request.GetRequiredResource(req, n)
		if err != nil {
			return nil, false, errors.Wrapf(err, "cannot read required resources %q", n)
		}
		if !ok {
			return nil, false, nil
		}
		for _, r := range rrs {
			it, mine, err := RequiredItem(r.Resource.Object, ns)
			if err != nil {
				return nil, false, err
			}
			if mine {
				items = append(items, it)
			}
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i].Source.Ref, items[j].Source.Ref
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	return items, true, nil
}

// Previous is the previous render as Crossplane observes it: the composed
// resources bind-fn manages carry the key material and zone serials.
func Previous(observed map[resource.Name]resource.ObservedComposed) ([]render.PrevObject, diag.Results) {
	var out []render.PrevObject
	var rs diag.Results
	names := make([]string, 0, len(observed))
	for n := range observed {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, n := range names {
		o := observed[resource.Name(n)].Resource
		if o == nil || o.GetLabels()[objects.LabelManagedBy] != objects.ManagedBy {
			continue
		}
		src := diag.Source{Ref: diag.ObjectRef{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}, File: "observed " + n}
		po := render.PrevObject{Src: src, Kind: o.GetKind(), Annotations: o.GetAnnotations()}
		if o.GetKind() == "Secret" {
			var s struct {
				Data       map[string][]byte `json:"data"`
				StringData map[string]string `json:"stringData"`
			}
			js, err := json.Marshal(o.Object)
			if err == nil {
				err = json.Unmarshal(js, &s)
			}
			if err != nil {
				rs.Warnf(src, "data", "cannot read the observed Secret (%v): its key material will be regenerated", err)
				continue
			}
			po.Data = s.Data
			for k, v := range s.StringData {
				if po.Data == nil {
					po.Data = map[string][]byte{}
				}
				po.Data[k] = []byte(v)
			}
		}
		out = append(out, po)
	}
	return out, rs
}

// ResourceName is the composition resource name of a rendered object:
// its kind and name, lower case, e.g. configmap-auth-config.
func ResourceName(kind, name string) resource.Name {
	return resource.Name(strings.ToLower(kind) + "-" + name)
}

// Composed turns rendered objects into desired composed resources with
// their readiness from the observed ones.
func Composed(objs []render.Object, observed map[resource.Name]resource.ObservedComposed) (map[resource.Name]*resource.DesiredComposed, error) {
	out := make(map[resource.Name]*resource.DesiredComposed, len(objs))
	for _, o := range objs {
		js, err := json.Marshal(o.Obj)
		if err != nil {
			return nil, err
		}
		cd := composed.New()
		if err := json.Unmarshal(js, &cd.Unstructured.Object); err != nil {
			return nil, err
		}
		// Crossplane owns status; a rendered empty status would only churn.
		delete(cd.Object, "status")
		if m, ok := cd.Object["metadata"].(map[string]any); ok && m["creationTimestamp"] == nil {
			delete(m, "creationTimestamp")
		}
		n := ResourceName(cd.GetKind(), cd.GetName())
		if _, dup := out[n]; dup {
			return nil, errors.Errorf("two rendered objects share the composition resource name %q", n)
		}
		out[n] = &resource.DesiredComposed{Resource: cd, Ready: Ready(observed[n].Resource)}
	}
	return out, nil
}

// Ready is a composed resource's readiness: a StatefulSet when all its
// pods are ready, anything else once it exists.
func Ready(obs *composed.Unstructured) resource.Ready {
	if obs == nil || obs.Object == nil {
		return resource.ReadyFalse
	}
	if obs.GetKind() != "StatefulSet" {
		return resource.ReadyTrue
	}
	want, err := obs.GetInteger("spec.replicas")
	if err != nil {
		want = 1 // the Kubernetes default
	}
	got, _ := obs.GetInteger("status.readyReplicas")
	if got >= want {
		return resource.ReadyTrue
	}
	return resource.ReadyFalse
}

// Status is XBindCluster.status.bind: where to reach the cluster, and the
// names of what the function manages.
func Status(cluster string, objs []render.Object, ours map[resource.Name]*resource.DesiredComposed) map[string]any {
	var secrets, zoneMaps []any
	ready := 0
	names := make([]string, 0, len(ours))
	for n := range ours {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, n := range names {
		d := ours[resource.Name(n)]
		if d.Ready == resource.ReadyTrue {
			ready++
		}
		comp := d.Resource.GetLabels()[objects.LabelComponent]
		switch {
		case d.Resource.GetKind() == "Secret" && comp == objects.ComponentTSIG:
			secrets = append(secrets, d.Resource.GetName())
		case d.Resource.GetKind() == "ConfigMap" && comp == objects.ComponentZones:
			zoneMaps = append(zoneMaps, d.Resource.GetName())
		}
	}
	st := map[string]any{
		"serveService":    layout.ServeServiceName(cluster),
		"primaryService":  layout.PrimaryServiceName(cluster),
		"headlessService": layout.HeadlessServiceName(cluster),
		"configMap":       layout.ConfigMapName(cluster),
		"composedObjects": int64(len(objs)),
		"readyObjects":    int64(ready),
		"tsigSecrets":     secrets,
		"zoneConfigMaps":  zoneMaps,
	}
	if secrets == nil {
		st["tsigSecrets"] = []any{}
	}
	if zoneMaps == nil {
		st["zoneConfigMaps"] = []any{}
	}
	return st
}

// FatalMessage is the text of the one Fatal result a failed validation
// ends in: every error (Crossplane shows only the first Fatal), each with
// its field path in the XR or the required object it is about.
func FatalMessage(loc *Locator, rs diag.Results) string {
	var errs []string
	for _, r := range rs {
		if r.Severity == diag.Error {
			errs = append(errs, loc.Message(r))
		}
	}
	head := fmt.Sprintf("cannot render %s %s/%s: ", loc.XR.Kind, loc.XR.Namespace, loc.XR.Name)
	if len(errs) == 1 {
		return head + errs[0]
	}
	return head + fmt.Sprintf("%d errors: ", len(errs)) + strings.Join(errs, "; ")
}
