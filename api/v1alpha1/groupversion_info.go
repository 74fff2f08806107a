// Package v1alpha1 holds the bind.unkin.net/v1alpha1 API: the custom resources
// users write to describe BIND 9 DNS, which bind-fn renders into Kubernetes
// objects. The group and field names are those of the bind-operator this
// project replaces, so its manifests keep working.
//
// +kubebuilder:object:generate=true
// +groupName=bind.unkin.net
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version of the API.
const (
	Group   = "bind.unkin.net"
	Version = "v1alpha1"
)

// GroupVersion is the group version of every kind in this package.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// APIVersion is the apiVersion string the kinds carry.
var APIVersion = GroupVersion.String()

// Kind names.
const (
	KindBindCluster      = "BindCluster"
	KindBindZone         = "BindZone"
	KindDNSRecord        = "DNSRecord"
	KindBindView         = "BindView"
	KindBindTSIGKey      = "BindTSIGKey"
	KindBindACL          = "BindACL"
	KindBindCatalogZone  = "BindCatalogZone"
	KindBindPolicy       = "BindPolicy"
	KindBindDNSSECPolicy = "BindDNSSECPolicy"
)

// Kinds lists every kind of the group, in the order a model is built.
var Kinds = []string{
	KindBindCluster, KindBindACL, KindBindTSIGKey, KindBindView, KindBindDNSSECPolicy,
	KindBindCatalogZone, KindBindZone, KindDNSRecord, KindBindPolicy,
}
