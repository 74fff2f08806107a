package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BindCatalogZoneSpec is an RFC 9432 catalog zone: the primary serves it with
// every member zone listed, and the secondaries provision members from it.
type BindCatalogZoneSpec struct {
	// ClusterRef names the BindCluster.
	// +kubebuilder:validation:MinLength=1
	ClusterRef string `json:"clusterRef"`

	// ZoneName of the catalog ("catalog.internal").
	// +kubebuilder:validation:MinLength=1
	ZoneName string `json:"zoneName"`

	// ViewRef: the view the catalog serves (required when the cluster has views).
	// +optional
	ViewRef string `json:"viewRef,omitempty"`

	// DefaultPrimaries are extra primaries for member zones, besides the
	// cluster's own primary (external primaries, "192.0.2.1 key k").
	// +optional
	DefaultPrimaries []string `json:"defaultPrimaries,omitempty"`

	// TransferKeyRef names the BindTSIGKey secondaries present for transfers;
	// it also signs intra-cluster NOTIFY. Default: a generated cluster key.
	// +optional
	TransferKeyRef string `json:"transferKeyRef,omitempty"`
}

// BindCatalogZone is a catalog zone of a BindCluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.spec.zoneName`
type BindCatalogZone struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BindCatalogZoneSpec `json:"spec,omitempty"`
	Status ObjectStatus        `json:"status,omitempty"`
}

// BindCatalogZoneList is a list of BindCatalogZone.
// +kubebuilder:object:root=true
type BindCatalogZoneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BindCatalogZone `json:"items"`
}
