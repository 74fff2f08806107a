package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BindViewSpec is a split-horizon view.
type BindViewSpec struct {
	// ClusterRef names the BindCluster the view belongs to.
	// +kubebuilder:validation:MinLength=1
	ClusterRef string `json:"clusterRef"`

	// ViewName overrides the view's name in named.conf (default: the object name).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`
	// +optional
	ViewName string `json:"viewName,omitempty"`

	// Order: views are matched in ascending order, then by name.
	// +optional
	Order int32 `json:"order,omitempty"`

	// MatchClients is the view's match-clients address match list:
	// addresses, CIDRs, ACL names, "key <name>", "!..." negations.
	// +optional
	MatchClients []string `json:"matchClients,omitempty"`

	// MatchDestinations is the view's match-destinations list.
	// +optional
	MatchDestinations []string `json:"matchDestinations,omitempty"`

	// Recursion in this view (resolver clusters; default: the cluster's mode).
	// +optional
	Recursion *bool `json:"recursion,omitempty"`

	// AllowRecursion is who may recurse in this view (an address match
	// list, as the cluster's spec.allowRecursion), when the view recurses;
	// default: the cluster's spec.allowRecursion. BIND reads
	// allow-recursion per view, so two recursive views can admit
	// different clients.
	// +optional
	AllowRecursion []string `json:"allowRecursion,omitempty"`
}

// BindView is a split-horizon view of a BindCluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterRef`
// +kubebuilder:printcolumn:name="Order",type=integer,JSONPath=`.spec.order`
type BindView struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BindViewSpec `json:"spec,omitempty"`
	Status ObjectStatus `json:"status,omitempty"`
}

// BindViewList is a list of BindView.
// +kubebuilder:object:root=true
type BindViewList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BindView `json:"items"`
}
