package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DNSRecordSpec is one RRset of a zone — external-dns as a CRD.
// +kubebuilder:validation:XValidation:rule="!(self.type.lowerAscii() == 'ns' && (!has(self.name) || self.name == '@' || self.name.size() == 0))",message="an apex NS RRset cannot be managed by a DNSRecord: BIND ignores an RRset-wide delete at a zone apex, so this would only append. Use BindZone.spec.nameservers"
type DNSRecordSpec struct {
	// ZoneRef names the BindZone (same namespace) the record belongs to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ZoneRef string `json:"zoneRef"`

	// Name is the owner, relative to the zone, "@" for the apex, or absolute
	// with a trailing dot.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Name string `json:"name,omitempty"`

	// Type is the RR type mnemonic.
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9]{0,15}$`
	// +kubebuilder:validation:MaxLength=16
	Type string `json:"type"`

	// TTL in seconds (default: the zone's defaultTTL).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	TTL *int32 `json:"ttl,omitempty"`

	// Values are the RDATA in presentation format.
	// +kubebuilder:validation:MinItems=1
	Values []string `json:"values"`
}

// DNSRecord is one RRset in a BindZone.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.spec.zoneRef`
// +kubebuilder:printcolumn:name="Name",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
type DNSRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DNSRecordSpec `json:"spec,omitempty"`
	Status ObjectStatus  `json:"status,omitempty"`
}

// DNSRecordList is a list of DNSRecord.
// +kubebuilder:object:root=true
type DNSRecordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DNSRecord `json:"items"`
}
