package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PolicyAction is what an RPZ rule answers.
// +kubebuilder:validation:Enum=nxdomain;nodata;passthru;drop;tcp-only;redirect
type PolicyAction string

// RPZ actions.
const (
	ActionNXDOMAIN PolicyAction = "nxdomain"
	ActionNODATA   PolicyAction = "nodata"
	ActionPassthru PolicyAction = "passthru"
	ActionDrop     PolicyAction = "drop"
	ActionTCPOnly  PolicyAction = "tcp-only"
	ActionRedirect PolicyAction = "redirect"
)

// PolicyRule is one RPZ trigger and its action.
type PolicyRule struct {
	// Name is the queried name the rule triggers on ("ads.example.com";
	// "*.ads.example.com" for its subdomains).
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Action to take.
	// +kubebuilder:default=nxdomain
	// +optional
	Action PolicyAction `json:"action,omitempty"`

	// Target of a redirect (a domain name, answered as a CNAME).
	// +optional
	Target string `json:"target,omitempty"`
}

// BindPolicySpec is a Response Policy Zone (DNS firewall).
type BindPolicySpec struct {
	// ClusterRef names the BindCluster.
	// +kubebuilder:validation:MinLength=1
	ClusterRef string `json:"clusterRef"`

	// ZoneName of the policy zone ("rpz.local").
	// +kubebuilder:validation:MinLength=1
	ZoneName string `json:"zoneName"`

	// ViewRef: the view the policy applies in (required when the cluster has views).
	// +optional
	ViewRef string `json:"viewRef,omitempty"`

	// Order among the cluster's policy zones (ascending, then zone name).
	// +optional
	Order int32 `json:"order,omitempty"`

	// Rules of the policy.
	// +optional
	Rules []PolicyRule `json:"rules,omitempty"`

	// Records are raw RPZ records, for what rules cannot say.
	// +optional
	Records []Record `json:"records,omitempty"`
}

// BindPolicy is a Response Policy Zone.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.spec.zoneName`
type BindPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BindPolicySpec `json:"spec,omitempty"`
	Status ObjectStatus   `json:"status,omitempty"`
}

// BindPolicyList is a list of BindPolicy.
// +kubebuilder:object:root=true
type BindPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BindPolicy `json:"items"`
}
