package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ZoneType is BIND's zone type.
// +kubebuilder:validation:Enum=primary;secondary;forward;stub
// +kubebuilder:validation:MaxLength=16
type ZoneType string

// Zone types.
const (
	ZonePrimary   ZoneType = "primary"
	ZoneSecondary ZoneType = "secondary"
	ZoneForward   ZoneType = "forward"
	ZoneStub      ZoneType = "stub"
)

// SOASpec overrides the zone's SOA. Timers default to refresh 300, retry 60,
// expire 1209600, minimum 60: NOTIFY is the fast path, these the fallback.
type SOASpec struct {
	// PrimaryNS is the MNAME (default: the first nameserver, else ns1.<zone>).
	// +optional
	PrimaryNS string `json:"primaryNS,omitempty"`
	// Email is the RNAME as a mailbox or domain name (default hostmaster.<zone>).
	// +optional
	Email string `json:"email,omitempty"`
	// Serial pins the SOA serial. Without it the serial is carried from the
	// previous render and incremented exactly when the zone content changes.
	// +optional
	Serial *uint32 `json:"serial,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +optional
	Refresh *int32 `json:"refresh,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +optional
	Retry *int32 `json:"retry,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +optional
	Expire *int32 `json:"expire,omitempty"`
	// Minimum is the negative-caching TTL.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Minimum *int32 `json:"minimum,omitempty"`
}

// BindZoneSpec is one zone served by a cluster.
// +kubebuilder:validation:XValidation:rule="!has(self.type) || (self.type != 'secondary' && self.type != 'stub') || (has(self.primaries) && size(self.primaries) > 0)",message="a secondary or stub zone needs spec.primaries"
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'forward' || (has(self.forwarders) && size(self.forwarders) > 0)",message="a forward zone needs spec.forwarders"
// +kubebuilder:validation:XValidation:rule="!has(self.dynamicUpdate) || !self.dynamicUpdate || (has(self.updateKeyRef) && size(self.updateKeyRef) > 0)",message="a dynamic zone needs spec.updateKeyRef"
type BindZoneSpec struct {
	// ClusterRef names the BindCluster (same namespace) serving the zone.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterRef string `json:"clusterRef"`

	// ZoneName is the zone's domain name ("example.com").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ZoneName string `json:"zoneName"`

	// Type of the zone.
	// +kubebuilder:default=primary
	// +optional
	Type ZoneType `json:"type,omitempty"`

	// ViewRef names the BindView the zone lives in. Required when the
	// cluster has views.
	// +optional
	ViewRef string `json:"viewRef,omitempty"`

	// DefaultTTL is the zone's $TTL (default 3600).
	// +kubebuilder:validation:Minimum=0
	// +optional
	DefaultTTL *int32 `json:"defaultTTL,omitempty"`

	// SOA overrides.
	// +optional
	SOA *SOASpec `json:"soa,omitempty"`

	// Nameservers is the apex NS RRset (absolute names or relative to the
	// zone). It owns the apex NS: DNSRecords cannot publish one.
	// +optional
	Nameservers []string `json:"nameservers,omitempty"`

	// Records are the zone's RRsets.
	// +optional
	Records []Record `json:"records,omitempty"`

	// DynamicUpdate accepts RFC 2136 updates signed with updateKeyRef; the
	// zone then lives in the writable data directory.
	// +optional
	DynamicUpdate bool `json:"dynamicUpdate,omitempty"`

	// UpdateKeyRef names the BindTSIGKey allowed to update the zone.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	UpdateKeyRef string `json:"updateKeyRef,omitempty"`

	// UpdateKeyTransfer lets the update key of a dynamic zone also transfer
	// (AXFR) the zone from the primary: RFC 2136 clients such as
	// external-dns list a zone's records by a TSIG-signed AXFR with the key
	// they update with. Default true; false leaves transfers to the
	// cluster's transfer key and spec.allowTransfer.
	// +optional
	UpdateKeyTransfer *bool `json:"updateKeyTransfer,omitempty"`

	// AllowTransfer adds address-match elements allowed to transfer the zone
	// (external secondaries; prefer "key <name>"). The cluster's own
	// secondaries are always allowed by key.
	// +optional
	AllowTransfer []string `json:"allowTransfer,omitempty"`

	// AlsoNotify lists external secondaries to NOTIFY ("192.0.2.1", "192.0.2.1 key k").
	// +optional
	AlsoNotify []string `json:"alsoNotify,omitempty"`

	// AllowQuery restricts who may query the zone.
	// +optional
	AllowQuery []string `json:"allowQuery,omitempty"`

	// Primaries of a secondary or stub zone ("192.0.2.1", "192.0.2.1 port 5353").
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=512
	// +optional
	Primaries []string `json:"primaries,omitempty"`

	// TransferKeyRef names the BindTSIGKey presented to external primaries.
	// +optional
	TransferKeyRef string `json:"transferKeyRef,omitempty"`

	// Forwarders of a forward zone.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=512
	// +optional
	Forwarders []string `json:"forwarders,omitempty"`

	// ForwardOnly: forward only (default) or forward first.
	// +optional
	ForwardOnly *bool `json:"forwardOnly,omitempty"`

	// DNSSECPolicyRef names the BindDNSSECPolicy that signs the zone.
	// +optional
	DNSSECPolicyRef string `json:"dnssecPolicyRef,omitempty"`

	// DNSSECRollover starts and finishes rollovers of the signed zone's
	// keys, one per role (docs/dnssec.md): a new label starts a rollover
	// (the render makes the successor key and ships it in the DNSSEC key
	// Secret), done finishes it (the old key and, for a KSK or CSK, its DS
	// go).
	// +optional
	DNSSECRollover *DNSSECRollovers `json:"dnssecRollover,omitempty"`

	// DNSSECOtherSigners are the DNSKEY records of the signed zone's other
	// signers (RFC 8901 multi-signer model 2; docs/dnssec.md), each as a
	// .key file's record line: the render adds them to the zone's DNSKEY
	// RRset (each signer serves the other's keys, so a resolver validates
	// either's signatures), and the DS of each of their KSKs (flags 257)
	// to ds.txt and to a parent zone in the cluster. BIND 9.20 keeps them;
	// 9.18 drops DNSKEY records of a signed zone's file.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	DNSSECOtherSigners []string `json:"dnssecOtherSigners,omitempty"`

	// Catalog: whether a primary zone is a member of its cluster's catalog
	// zone (default true when the cluster, or its view, has one).
	// +optional
	Catalog *bool `json:"catalog,omitempty"`

	// ResponsePolicy: a secondary zone whose rules apply (a response
	// policy feed, such as a vendor's blocklist transferred from its
	// primaries): listed in its view's response-policy, after the view's
	// BindPolicies, in zone name order. Only a secondary zone can be one
	// (a policy bind-fn writes is a BindPolicy).
	// +optional
	ResponsePolicy bool `json:"responsePolicy,omitempty"`
}

// DNSSECRollovers are a signed zone's key rollovers, one per key role of
// its policy.
type DNSSECRollovers struct {
	// +optional
	KSK *DNSSECRollover `json:"ksk,omitempty"`
	// +optional
	ZSK *DNSSECRollover `json:"zsk,omitempty"`
	// +optional
	CSK *DNSSECRollover `json:"csk,omitempty"`
}

// DNSSECRollover is one rollover of a zone's key of one role.
type DNSSECRollover struct {
	// Label names the rollover ("2027-01"); a label the last render did not
	// see starts a new rollover, once the previous one is done.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`
	Label string `json:"label"`
	// Done finishes the rollover: set it when named reports the old key's
	// last step may be taken (for a KSK or CSK: the old DS may leave the
	// parent; rndc dnssec -status). The render then drops the old key from
	// the Secret and its DS from a parent zone in the cluster.
	// +optional
	Done bool `json:"done,omitempty"`
}

// BindZone is a DNS zone served by a BindCluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bz
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.spec.zoneName`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterRef`
type BindZone struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BindZoneSpec `json:"spec,omitempty"`
	Status ObjectStatus `json:"status,omitempty"`
}

// BindZoneList is a list of BindZone.
// +kubebuilder:object:root=true
type BindZoneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BindZone `json:"items"`
}
