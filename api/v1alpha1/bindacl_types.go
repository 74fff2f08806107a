package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BindACLSpec is a named address_match_list.
type BindACLSpec struct {
	// ClusterRef scopes the ACL to one cluster; empty shares it with every
	// cluster of the namespace.
	// +optional
	ClusterRef string `json:"clusterRef,omitempty"`

	// ACLName overrides the ACL's name in named.conf (default: the object name).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`
	// +optional
	ACLName string `json:"aclName,omitempty"`

	// Addresses: addresses, CIDRs, other ACL names, "key <name>", "!..." negations.
	// +kubebuilder:validation:MinItems=1
	Addresses []string `json:"addresses"`
}

// BindACL is a named address match list.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type BindACL struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BindACLSpec  `json:"spec,omitempty"`
	Status ObjectStatus `json:"status,omitempty"`
}

// BindACLList is a list of BindACL.
// +kubebuilder:object:root=true
type BindACLList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BindACL `json:"items"`
}
