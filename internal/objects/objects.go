// Package objects builds the Kubernetes objects of one BindCluster: the
// StatefulSet, its Services, the PodDisruptionBudget, ConfigMaps and
// Secrets. The builders are pure: typed k8s.io/api values in, the same bytes
// out for the same input. They never read configuration content into the pod
// template (docs/design.md#no-runtime-address): a zone, record or key change must never roll a pod.
package objects

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/internal/model"
)

// ManagedBy is the app.kubernetes.io/managed-by value of every object.
const ManagedBy = "bind-fn"

// PartOf is the app.kubernetes.io/part-of value of every object.
const PartOf = "bind-fn"

// AppName is the app.kubernetes.io/name value of every object.
const AppName = "bind"

// Well-known label keys.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelPartOf    = "app.kubernetes.io/part-of"
	// LabelPodName is set by the StatefulSet controller on every pod.
	LabelPodName = "statefulset.kubernetes.io/pod-name"
)

// Components (app.kubernetes.io/component).
const (
	ComponentServer  = "server"  // StatefulSet, its pods, headless Service, PDB
	ComponentPrimary = "primary" // <cluster>-primary Service
	ComponentServe   = "serve"   // the serve VIP Service
	ComponentConfig  = "config"  // named.conf / agent.json ConfigMap
	ComponentZones   = "zones"   // zone file ConfigMap shards
	ComponentTSIG    = "tsig-key"
	// ComponentRNDC marked the <cluster>-rndc Secret that earlier renders
	// wrote; it is still recognised as the function's own output, so a
	// package rendered before is cleaned of it.
	ComponentRNDC = "rndc-key"
	ComponentKeys = "keys"
)

// Labels returns the managed labels of an object of the cluster.
func Labels(c *model.Cluster, component string) map[string]string {
	return map[string]string{
		LabelName:      AppName,
		LabelInstance:  c.Name,
		LabelComponent: component,
		LabelManagedBy: ManagedBy,
		LabelPartOf:    PartOf,
	}
}

// SelectorLabels selects the cluster's pods: name and instance only, so the
// selector (immutable on a StatefulSet) never changes.
func SelectorLabels(c *model.Cluster) map[string]string {
	return map[string]string{
		LabelName:     AppName,
		LabelInstance: c.Name,
	}
}

// objectMeta returns metadata with the managed labels. user labels and
// annotations are stamped first; managed labels always win. The namespace is
// omitted when the cluster has none (kustomize sets it later).
func objectMeta(c *model.Cluster, name, component string, userLabels, annotations map[string]string) metav1.ObjectMeta {
	labels := map[string]string{}
	maps.Copy(labels, userLabels)
	maps.Copy(labels, Labels(c, component))
	return metav1.ObjectMeta{
		Name:        name,
		Namespace:   c.Namespace,
		Labels:      labels,
		Annotations: copyMap(annotations),
	}
}

// copyMap returns a copy of m, or nil when m is empty (so no empty map is
// serialised).
func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

func ptr[T any](v T) *T { return &v }
