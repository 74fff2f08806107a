package v1alpha1

// TLSSpec serves encrypted DNS and protects zone transfers with TLS
// (docs/tls.md). The certificate and its key come from a Secret in
// cert-manager's format (type kubernetes.io/tls): tls.crt, tls.key and,
// for strict transfers, ca.crt. The pods mount it; when its files change
// the agent checks them and runs rndc reconfig, which makes named load the
// new certificate without a restart.
type TLSSpec struct {
	// SecretName is the Secret that holds tls.crt, tls.key and optional
	// ca.crt (cert-manager's Certificate writes that format).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// DoT serves DNS over TLS (RFC 7858) on every pod; the Services carry
	// its port.
	// +optional
	DoT *DoTSpec `json:"dot,omitempty"`

	// DoH serves DNS over HTTPS (RFC 8484, HTTP/2) on every pod; the
	// Services carry its port.
	// +optional
	DoH *DoHSpec `json:"doh,omitempty"`

	// Certificate renders a cert-manager Certificate (cert-manager.io/v1)
	// that writes secretName: the Services' names and dnsNames, issued
	// by issuerRef.
	// +optional
	Certificate *CertificateSpec `json:"certificate,omitempty"`

	// Transfers makes the secondaries transfer from pod 0 over TLS
	// (XoT, RFC 9103), TSIG kept: strict verifies the primary's
	// certificate against ca.crt and remoteHostname; opportunistic
	// encrypts without verifying (BIND's names).
	// +optional
	Transfers *TransferTLSSpec `json:"transfers,omitempty"`
}

// DoTSpec is the DNS-over-TLS listener.
type DoTSpec struct {
	// Port (default 853).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`
}

// DoHSpec is the DNS-over-HTTPS listener.
type DoHSpec struct {
	// Port (default 443).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// Path is the HTTP endpoint (default /dns-query); it starts with "/".
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Path string `json:"path,omitempty"`
}

// CertificateSpec is the cert-manager Certificate bind-fn renders.
type CertificateSpec struct {
	// IssuerRef names the cert-manager Issuer or ClusterIssuer.
	IssuerRef IssuerRef `json:"issuerRef"`

	// DNSNames are added to the Services' names.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	DNSNames []string `json:"dnsNames,omitempty"`

	// Duration and RenewBefore are cert-manager's (Go durations, "2160h").
	// +optional
	Duration string `json:"duration,omitempty"`
	// +optional
	RenewBefore string `json:"renewBefore,omitempty"`
}

// IssuerRef is cert-manager's reference to an issuer.
type IssuerRef struct {
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Kind is Issuer (default) or ClusterIssuer.
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	// +optional
	Kind string `json:"kind,omitempty"`
	// Group (default cert-manager.io).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Group string `json:"group,omitempty"`
}

// TLSMode is how a transfer client treats the server's certificate, in
// BIND's words.
// +kubebuilder:validation:Enum=strict;opportunistic
type TLSMode string

// TLS modes.
const (
	// TLSStrict: the certificate must chain to ca.crt and name
	// remoteHostname (BIND's "Strict TLS": ca-file and remote-hostname).
	TLSStrict TLSMode = "strict"
	// TLSOpportunistic: encrypted, the certificate not verified.
	TLSOpportunistic TLSMode = "opportunistic"
)

// TransferTLSSpec makes transfers go over TLS.
type TransferTLSSpec struct {
	// Mode is strict or opportunistic.
	Mode TLSMode `json:"mode"`

	// RemoteHostname is the name the primary's certificate must carry in
	// strict mode (default: the primary Service's name,
	// <cluster>-primary.<namespace>.svc.<clusterDomain>; for
	// spec.replication, the primary cluster's).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	RemoteHostname string `json:"remoteHostname,omitempty"`
}
