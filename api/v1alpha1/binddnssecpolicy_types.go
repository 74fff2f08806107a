package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DNSSECKey is one key of a dnssec-policy.
type DNSSECKey struct {
	// Role of the key.
	// +kubebuilder:validation:Enum=ksk;zsk;csk
	Role string `json:"role"`
	// Algorithm mnemonic (ecdsap256sha256, ed25519, rsasha256, ...).
	// +kubebuilder:default=ecdsap256sha256
	// +optional
	Algorithm string `json:"algorithm,omitempty"`
	// Bits for RSA algorithms.
	// +optional
	Bits *int32 `json:"bits,omitempty"`
	// Lifetime as an ISO 8601 duration ("P1Y") or "unlimited" (default).
	// +optional
	Lifetime string `json:"lifetime,omitempty"`
}

// NSEC3Spec asks for NSEC3 instead of NSEC.
type NSEC3Spec struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=150
	// +optional
	Iterations int32 `json:"iterations,omitempty"`
	// +optional
	OptOut bool `json:"optOut,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=255
	// +optional
	SaltLength int32 `json:"saltLength,omitempty"`
}

// ParentalAgents are the servers named asks for a zone's DS at its parent
// (BIND parental-agents): during a KSK rollover it waits until they serve
// the successor's DS (and no longer the predecessor's) before it moves on.
type ParentalAgents struct {
	// Addresses of the parent zone's servers: an IP address, or an IP
	// address and port (192.0.2.53:5353, [2001:db8::53]:5353).
	// +optional
	Addresses []string `json:"addresses,omitempty"`
	// ParentInCluster: the parent of each zone of the policy is a primary
	// BindZone of the same BindCluster, which the render writes the
	// child's DS into; named asks itself (127.0.0.1).
	// +optional
	ParentInCluster bool `json:"parentInCluster,omitempty"`
}

// BindDNSSECPolicySpec is a BIND dnssec-policy.
type BindDNSSECPolicySpec struct {
	// ClusterRef scopes the policy to one cluster; empty shares it.
	// +optional
	ClusterRef string `json:"clusterRef,omitempty"`

	// PolicyName in named.conf (default: the object name).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`
	// +optional
	PolicyName string `json:"policyName,omitempty"`

	// Keys of the policy (default: one CSK, ecdsap256sha256, unlimited).
	// +optional
	Keys []DNSSECKey `json:"keys,omitempty"`

	// NSEC3 parameters; NSEC when absent.
	// +optional
	NSEC3 *NSEC3Spec `json:"nsec3,omitempty"`

	// CDNSKEY publishes a CDNSKEY record beside the CDS records while the
	// parent may take a new DS (BIND 9.20 cdnskey; default true). BIND 9.18
	// always publishes it: false needs BIND 9.20.
	// +optional
	CDNSKEY *bool `json:"cdnskey,omitempty"`
	// CDSDigestTypes are the digest types of the CDS records (BIND 9.20
	// cds-digest-types; default sha-256). BIND 9.18 publishes SHA-256 only.
	// +optional
	CDSDigestTypes []string `json:"cdsDigestTypes,omitempty"`
	// ParentalAgents: where named checks the DS of each zone of the policy.
	// +optional
	ParentalAgents *ParentalAgents `json:"parentalAgents,omitempty"`
	// CheckDS is BIND 9.20's checkds: explicit (ask the parental agents
	// only; the default with parentalAgents), yes (ask the servers of the
	// parent's NS RRset; the default without), no (wait for rndc dnssec
	// -checkds). BIND 9.18 behaves as explicit with parentalAgents and as
	// no without: another value needs BIND 9.20.
	// +kubebuilder:validation:Enum=yes;no;explicit
	// +optional
	CheckDS string `json:"checkDS,omitempty"`

	// Durations, as ISO 8601 ("PT1H", "P14D").
	// +optional
	DNSKEYTTL string `json:"dnskeyTTL,omitempty"`
	// +optional
	MaxZoneTTL string `json:"maxZoneTTL,omitempty"`
	// +optional
	SignaturesRefresh string `json:"signaturesRefresh,omitempty"`
	// +optional
	SignaturesValidity string `json:"signaturesValidity,omitempty"`
	// +optional
	SignaturesValidityDNSKEY string `json:"signaturesValidityDNSKEY,omitempty"`
	// +optional
	PublishSafety string `json:"publishSafety,omitempty"`
	// +optional
	RetireSafety string `json:"retireSafety,omitempty"`
	// +optional
	PurgeKeys string `json:"purgeKeys,omitempty"`
	// +optional
	ZonePropagationDelay string `json:"zonePropagationDelay,omitempty"`
	// +optional
	ParentDSTTL string `json:"parentDSTTL,omitempty"`
	// +optional
	ParentPropagationDelay string `json:"parentPropagationDelay,omitempty"`
}

// BindDNSSECPolicy is a dnssec-policy.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type BindDNSSECPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BindDNSSECPolicySpec `json:"spec,omitempty"`
	Status ObjectStatus         `json:"status,omitempty"`
}

// BindDNSSECPolicyList is a list of BindDNSSECPolicy.
// +kubebuilder:object:root=true
type BindDNSSECPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BindDNSSECPolicy `json:"items"`
}
