// Package v1alpha1 is the input of the function-bind composition function
// (fn.bind.unkin.net/v1alpha1, kind Input): how the rendered Kubernetes
// objects are composed. controller-gen writes its CRD into
// package/function/input (go generate ./internal/xfn/input/...); a test
// fails when that copy is stale.
//
// +kubebuilder:object:generate=false
// +groupName=fn.bind.unkin.net
// +versionName=v1alpha1
package v1alpha1

//go:generate ../../../../bin/controller-gen crd:crdVersions=v1 paths=./... output:crd:artifacts:config=../../../../package/function/input

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The input's identity.
const (
	Group      = "fn.bind.unkin.net"
	Version    = "v1alpha1"
	Kind       = "Input"
	APIVersion = Group + "/" + Version
)

// ObjectWrapping says how each rendered Kubernetes object is composed.
// +kubebuilder:validation:Enum=None;ProviderKubernetes
type ObjectWrapping string

const (
	// WrappingNone composes the Kubernetes objects themselves: Crossplane v2,
	// where a composite may compose any resource.
	WrappingNone ObjectWrapping = "None"
	// WrappingProviderKubernetes wraps each object in a provider-kubernetes
	// Object (kubernetes.crossplane.io/v1alpha2): Crossplane v1.x, where a
	// Composition composes managed resources only.
	WrappingProviderKubernetes ObjectWrapping = "ProviderKubernetes"
)

// Input configures function-bind. Every field is optional: without an input
// the function composes native objects.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// ObjectWrapping: None (the default) composes the Kubernetes objects
	// themselves (Crossplane v2); ProviderKubernetes wraps each in a
	// provider-kubernetes Object (kubernetes.crossplane.io/v1alpha2), for
	// Crossplane v1.x. Wrapping needs a cluster-scoped composite.
	// +kubebuilder:default=None
	// +optional
	ObjectWrapping ObjectWrapping `json:"objectWrapping,omitempty"`

	// ProviderConfigRef names the provider-kubernetes ProviderConfig the
	// wrapping Objects use (default "default"). Only with ProviderKubernetes.
	// +optional
	ProviderConfigRef *ProviderConfigRef `json:"providerConfigRef,omitempty"`
}

// ProviderConfigRef names a provider-kubernetes ProviderConfig.
type ProviderConfigRef struct {
	// Name of the ProviderConfig.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// DefaultProviderConfig is the ProviderConfig wrapped objects use when the
// input names none.
const DefaultProviderConfig = "default"
