package v1alpha1

// SecretMetadata carries extra labels and annotations to stamp onto a Secret
// the function writes. Managed labels (app.kubernetes.io/*) always win.
type SecretMetadata struct {
	// Annotations to set on the Secret.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels to set on the Secret.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// Record is one RRset: every value shares the owner name, type and TTL.
type Record struct {
	// Name is the owner, relative to the zone ("www"), "@" for the apex, or
	// absolute with a trailing dot ("www.example.com.").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// Type is the RR type mnemonic (A, AAAA, CNAME, MX, TXT, SRV, CAA, PTR, NS, ...).
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9]{0,15}$`
	// +kubebuilder:validation:MaxLength=16
	Type string `json:"type"`

	// TTL in seconds; defaults to the zone's defaultTTL.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	TTL *int32 `json:"ttl,omitempty"`

	// Values are the RDATA in zone-file presentation format, one per record
	// ("10 mail.example.com.", "\"v=spf1 -all\"").
	// +kubebuilder:validation:MinItems=1
	Values []string `json:"values"`
}
