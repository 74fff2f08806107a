package xfn

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"git.unkin.net/unkin/bind-fn/internal/xfn/input/v1alpha1"
)

// provider-kubernetes' Object, the managed resource that wraps a Kubernetes
// object for Crossplane v1.x.
const (
	ObjectAPIVersion = "kubernetes.crossplane.io/v1alpha2"
	ObjectKind       = "Object"
	objectGroup      = "kubernetes.crossplane.io/"
)

// Options are the function's input, checked.
type Options struct {
	Wrapping       v1alpha1.ObjectWrapping
	ProviderConfig string
}

// ReadInput decodes the function's input (nil: the defaults). Unknown
// fields and values are errors that name the field.
func ReadInput(in *structpb.Struct) (Options, error) {
	opt := Options{Wrapping: v1alpha1.WrappingNone, ProviderConfig: v1alpha1.DefaultProviderConfig}
	if in == nil || len(in.GetFields()) == 0 {
		return opt, nil
	}
	js, err := in.MarshalJSON()
	if err != nil {
		return opt, fmt.Errorf("cannot encode the function input: %w", err)
	}
	var v v1alpha1.Input
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return opt, fmt.Errorf("cannot read the function input (%s, kind %s): %w", v1alpha1.APIVersion, v1alpha1.Kind, err)
	}
	if v.APIVersion != v1alpha1.APIVersion || v.Kind != v1alpha1.Kind {
		return opt, fmt.Errorf("the function input is %s %s: function-bind takes apiVersion %s, kind %s", v.APIVersion, v.Kind, v1alpha1.APIVersion, v1alpha1.Kind)
	}
	switch v.ObjectWrapping {
	case "", v1alpha1.WrappingNone:
	case v1alpha1.WrappingProviderKubernetes:
		opt.Wrapping = v.ObjectWrapping
	default:
		return opt, fmt.Errorf("input.objectWrapping: %q is not one of %s, %s", v.ObjectWrapping, v1alpha1.WrappingNone, v1alpha1.WrappingProviderKubernetes)
	}
	if v.ProviderConfigRef != nil {
		if v.ProviderConfigRef.Name == "" {
			return opt, fmt.Errorf("input.providerConfigRef.name: must not be empty")
		}
		if opt.Wrapping != v1alpha1.WrappingProviderKubernetes {
			return opt, fmt.Errorf("input.providerConfigRef: only used with objectWrapping %s", v1alpha1.WrappingProviderKubernetes)
		}
		opt.ProviderConfig = v.ProviderConfigRef.Name
	}
	return opt, nil
}

// maxObjectName is the longest name of a cluster-scoped object.
const maxObjectName = 253

// ObjectName is the name of the Object wrapping the composed resource
// named res of the composite xr. Objects are cluster scoped: the
// composite's name (unique cluster-wide, with Crossplane's suffix for a
// claim) keeps them apart. Over-long names end in a hash of the whole.
func ObjectName(xr, res string) string {
	n := xr + "-" + res
	if len(n) <= maxObjectName {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	h := hex.EncodeToString(sum[:])[:10]
	return n[:maxObjectName-len(h)-1] + "-" + h
}

// Wrap returns a provider-kubernetes Object that manages obj (an
// unstructured Kubernetes object). The Object carries obj's labels, so
// kubectl get objects -l app.kubernetes.io/instance=<cluster> finds them.
func Wrap(obj map[string]any, name, providerConfig string) map[string]any {
	labels := map[string]any{}
	if m, ok := obj["metadata"].(map[string]any); ok {
		if l, ok := m["labels"].(map[string]any); ok {
			for k, v := range l {
				labels[k] = v
			}
		}
	}
	meta := map[string]any{"name": name}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	return map[string]any{
		"apiVersion": ObjectAPIVersion,
		"kind":       ObjectKind,
		"metadata":   meta,
		"spec": map[string]any{
			"forProvider":       map[string]any{"manifest": obj},
			"providerConfigRef": map[string]any{"name": providerConfig},
		},
	}
}

// IsObject reports whether o is a provider-kubernetes Object (any version).
func IsObject(o map[string]any) bool {
	av, _ := o["apiVersion"].(string)
	k, _ := o["kind"].(string)
	return k == ObjectKind && len(av) > len(objectGroup) && av[:len(objectGroup)] == objectGroup
}

// Unwrap returns what an observed provider-kubernetes Object holds: the
// manifest the function asked for (spec.forProvider.manifest: the source of
// key material and serials, since provider-kubernetes may redact a Secret's
// data in what it observes), and the object as the provider last observed
// it in the cluster (status.atProvider.manifest: the source of readiness;
// nil until observed).
func Unwrap(o map[string]any) (desired, observed map[string]any) {
	spec, _ := o["spec"].(map[string]any)
	fp, _ := spec["forProvider"].(map[string]any)
	desired, _ = fp["manifest"].(map[string]any)
	st, _ := o["status"].(map[string]any)
	ap, _ := st["atProvider"].(map[string]any)
	observed, _ = ap["manifest"].(map[string]any)
	return desired, observed
}
