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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
	v1alpha1in "git.unkin.net/unkin/bind-fn/internal/xfn/input/v1alpha1"
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
	opt, err := ReadInput(req.GetInput())
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	items, loc, rs := FromXR(oxr.Resource.Object)
	if rs.HasErrors() && loc.Target.Namespace == "" {
		// No namespace to render into (or no name): nothing to ask for.
		rs.Sort()
		response.Fatal(rsp, errors.New(FatalMessage(loc, rs)))
		response.ConditionFalse(rsp, ConditionRendered, "InvalidSpec").WithMessage("see the Fatal result").TargetComposite()
		return rsp, nil
	}
	if opt.Wrapping == v1alpha1in.WrappingProviderKubernetes && loc.XR.Namespace != "" {
		response.Fatal(rsp, errors.Errorf("cannot wrap the objects of %s in provider-kubernetes Objects: Objects (%s) are cluster scoped and a "+
			"namespaced composite composes only namespaced resources. Use objectWrapping %s (native objects) on Crossplane v2, or a "+
			"cluster-scoped %s with a %s", XRString(loc), ObjectAPIVersion, v1alpha1in.WrappingNone, LegacyKind, ClaimKind))
		return rsp, nil
	}
	name, ns := loc.Target.Name, loc.Target.Namespace
	log = log.WithValues("xr", XRString(loc))

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
	ours, err := Composed(objs, observed, opt, loc.XR.Name)
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
	if err := dxr.Resource.SetValue("status.bind", Status(loc.Target, ours)); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set composite resource status"))
		return rsp, nil
	}
	if loc.XR.Namespace == "" {
		// A legacy composite's connection details reach the claim's
		// connection Secret: where to reach the cluster, never key material.
		dxr.ConnectionDetails = ConnectionDetails(loc.Target, ours)
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
			"partial state. Split the zones of %s across several composites", mib(n), mib(max), XRString(loc)))
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
	// Crossplane v2 answers requirements.resources; v1.x (1.15 and later)
	// knows only the older extra_resources. v2 answers both, and the
	// function reads whichever came.
	return &fnv1.Requirements{
		Resources: map[string]*fnv1.ResourceSelector{
			RequiredZones:   sel(v1alpha1.KindBindZone),
			RequiredRecords: sel(v1alpha1.KindDNSRecord),
		},
		//lint:ignore SA1019 Crossplane v1.x reads only this field.
		ExtraResources: map[string]*fnv1.ResourceSelector{
			RequiredZones:   sel(v1alpha1.KindBindZone),
			RequiredRecords: sel(v1alpha1.KindDNSRecord),
		},
	}
}

// requiredItems returns the required resources of namespace ns as items,
// sorted by kind and name; resolved is false until Crossplane has answered
// both requirements (as required_resources, or Crossplane v1.x's
// extra_resources).
func requiredItems(req *fnv1.RunFunctionRequest, ns string) ([]model.Item, bool, error) {
	var items []model.Item
	//lint:ignore SA1019 Crossplane v1.x answers only extra_resources.
	extras, err := request.GetExtraResources(req)
	if err != nil {
		return nil, false, errors.Wrap(err, "cannot read extra resources")
	}
	for _, n := range []string{RequiredZones, RequiredRecords} {
		rrs, ok, err := request.GetRequiredResource(req, n)
		if err != nil {
			return nil, false, errors.Wrapf(err, "cannot read required resources %q", n)
		}
		if !ok {
			rrs, ok = extras[n]
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
func Previous(observed map[resource.Name]resource.ObservedComposed) ([]prior.Object, diag.Results) {
	var out []prior.Object
	var rs diag.Results
	names := make([]string, 0, len(observed))
	for n := range observed {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, n := range names {
		o := observed[resource.Name(n)].Resource
		if o != nil && IsObject(o.Object) {
			// A wrapped object's state is in the manifest the function
			// asked for: provider-kubernetes may redact an observed Secret.
			m, _ := Unwrap(o.Object)
			o = &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: m}}
		}
		if o == nil || o.Object == nil || o.GetLabels()[objects.LabelManagedBy] != objects.ManagedBy {
			continue
		}
		src := diag.Source{Ref: diag.ObjectRef{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}, File: "observed " + n}
		po := prior.Object{Src: src, Kind: o.GetKind(), Annotations: o.GetAnnotations()}
		switch {
		case o.GetKind() == "Secret":
			js, err := json.Marshal(o.Object)
			if err == nil {
				po.Data, err = prior.SecretData(js)
			}
			if err != nil {
				rs.Warnf(src, "data", "cannot read the observed Secret (%v): its key material will be regenerated", err)
				continue
			}
		case o.GetKind() == "ConfigMap" && o.GetLabels()[objects.LabelComponent] == objects.ComponentZones:
			// The zones' state is their files (internal/output).
			js, err := json.Marshal(o.Object)
			if err == nil {
				po.Data, err = prior.ConfigMapData(js)
			}
			if err != nil {
				rs.Errorf(src, "data", "cannot read the observed zone files (%v): their serials are the zones' state", err)
				continue
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
// their readiness from the observed ones: the objects themselves, or each
// wrapped in a provider-kubernetes Object named after the composite xrName.
func Composed(objs []render.Object, observed map[resource.Name]resource.ObservedComposed, opt Options, xrName string) (map[resource.Name]*resource.DesiredComposed, error) {
	out := make(map[resource.Name]*resource.DesiredComposed, len(objs))
	for _, o := range objs {
		js, err := json.Marshal(o.Obj)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			return nil, err
		}
		// Crossplane owns status; a rendered empty status would only churn.
		delete(m, "status")
		if md, ok := m["metadata"].(map[string]any); ok && md["creationTimestamp"] == nil {
			delete(md, "creationTimestamp")
		}
		kind, _ := m["kind"].(string)
		md, _ := m["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		n := ResourceName(kind, name)
		if _, dup := out[n]; dup {
			return nil, errors.Errorf("two rendered objects share the composition resource name %q", n)
		}
		obs := observed[n].Resource
		if opt.Wrapping == v1alpha1in.WrappingProviderKubernetes {
			m = Wrap(m, ObjectName(xrName, string(n)), opt.ProviderConfig)
			var inner map[string]any
			if obs != nil && obs.Object != nil && IsObject(obs.Object) {
				_, inner = Unwrap(obs.Object)
			}
			obs = nil
			if inner != nil {
				obs = &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: inner}}
			}
		}
		cd := composed.New()
		cd.Object = m
		out[n] = &resource.DesiredComposed{Resource: cd, Ready: Ready(obs)}
	}
	return out, nil
}

// Ready is a composed resource's readiness from the object as observed in
// the cluster (unwrapped, for a provider-kubernetes Object): a StatefulSet
// when all its pods are ready, anything else once it exists.
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

// manifest is the Kubernetes object a desired composed resource stands
// for: itself, or the one a provider-kubernetes Object wraps.
func manifest(d *resource.DesiredComposed) *unstructured.Unstructured {
	if IsObject(d.Resource.Object) {
		m, _ := Unwrap(d.Resource.Object)
		return &unstructured.Unstructured{Object: m}
	}
	return &d.Resource.Unstructured
}

// ServeAddress is the DNS name of the cluster's serve Service: resolvable
// from any pod through the search path, whatever the cluster domain.
func ServeAddress(t Target) string {
	return layout.ServeServiceName(t.Name) + "." + t.Namespace + ".svc"
}

// Status is the composite's status.bind (a claim shows it too): where to
// reach the cluster, and the names of what the function manages. It names
// Secrets, never their content.
func Status(t Target, ours map[resource.Name]*resource.DesiredComposed) map[string]any {
	secrets, zoneMaps := []any{}, []any{}
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
		m := manifest(d)
		comp := m.GetLabels()[objects.LabelComponent]
		switch {
		case m.GetKind() == "Secret" && comp == objects.ComponentTSIG:
			secrets = append(secrets, m.GetName())
		case m.GetKind() == "ConfigMap" && comp == objects.ComponentZones:
			zoneMaps = append(zoneMaps, m.GetName())
		}
	}
	st := map[string]any{
		"namespace":       t.Namespace,
		"serveService":    layout.ServeServiceName(t.Name),
		"serveAddress":    ServeAddress(t),
		"primaryService":  layout.PrimaryServiceName(t.Name),
		"headlessService": layout.HeadlessServiceName(t.Name),
		"configMap":       layout.ConfigMapName(t.Name),
		"composedObjects": int64(len(ours)),
		"readyObjects":    int64(ready),
		"tsigSecrets":     secrets,
		"zoneConfigMaps":  zoneMaps,
	}
	addDNSSECStatus(st, t, ours)
	return st
}

// ConnectionKeys are the keys of a legacy composite's connection details
// (and so of its claim's connection Secret).
var ConnectionKeys = []string{"namespace", "port", "primaryService", "serveAddress", "serveService", "tsigSecrets"}

// ConnectionDetails are a legacy composite's connection details: where to
// reach the cluster and which Secrets hold its TSIG keys (comma-separated,
// in the same namespace). Never key material: an application team mounts
// the named Secret in its namespace.
func ConnectionDetails(t Target, ours map[resource.Name]*resource.DesiredComposed) resource.ConnectionDetails {
	st := Status(t, ours)
	var secrets []string
	for _, s := range st["tsigSecrets"].([]any) {
		secrets = append(secrets, s.(string))
	}
	return resource.ConnectionDetails{
		"namespace":      []byte(t.Namespace),
		"port":           []byte("53"),
		"primaryService": []byte(st["primaryService"].(string)),
		"serveAddress":   []byte(st["serveAddress"].(string)),
		"serveService":   []byte(st["serveService"].(string)),
		"tsigSecrets":    []byte(strings.Join(secrets, ",")),
	}
}

// XRString names the composite in messages: Kind namespace/name, or for a
// cluster-scoped one Kind name and its claim.
func XRString(loc *Locator) string {
	if loc.XR.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", loc.XR.Kind, loc.XR.Namespace, loc.XR.Name)
	}
	s := loc.XR.Kind + " " + loc.XR.Name
	if c := loc.Target.Claim; c != nil {
		s += fmt.Sprintf(" (claim %s %s/%s)", c.Kind, c.Namespace, c.Name)
	}
	return s
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
	head := "cannot render " + XRString(loc) + ": "
	if len(errs) == 1 {
		return head + errs[0]
	}
	return head + fmt.Sprintf("%d errors: ", len(errs)) + strings.Join(errs, "; ")
}
