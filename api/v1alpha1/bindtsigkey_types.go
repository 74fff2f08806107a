package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BindTSIGKeySpec is a TSIG key. Its material lives in a Secret (keys
// algorithm, keyName, secret, key.conf), generated once by the function or,
// with importExisting, managed elsewhere.
type BindTSIGKeySpec struct {
	// ClusterRef scopes the key to one cluster; empty shares it with every
	// cluster of the namespace.
	// +optional
	ClusterRef string `json:"clusterRef,omitempty"`

	// KeyName is the key's name in named.conf (default: the object name).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([A-Za-z0-9_.-]{0,251}[A-Za-z0-9])?\.?$`
	// +optional
	KeyName string `json:"keyName,omitempty"`

	// Algorithm of the key.
	// +kubebuilder:validation:Enum=hmac-md5;hmac-sha1;hmac-sha224;hmac-sha256;hmac-sha384;hmac-sha512
	// +kubebuilder:default=hmac-sha256
	// +optional
	Algorithm string `json:"algorithm,omitempty"`

	// SecretName is the Secret the material is written to (or read from with
	// importExisting). Defaults to "<name>-tsig".
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// ImportExisting: the Secret is managed elsewhere (Vault, External
	// Secrets, SealedSecrets, reflector) and must hold at least a `secret`
	// key; the function never writes it.
	// +optional
	ImportExisting bool `json:"importExisting,omitempty"`

	// SecretTemplate stamps labels and annotations on the generated Secret
	// (e.g. reflector hints). Managed labels always win.
	// +optional
	SecretTemplate *SecretMetadata `json:"secretTemplate,omitempty"`
}

// BindTSIGKey is a TSIG key.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Algorithm",type=string,JSONPath=`.spec.algorithm`
type BindTSIGKey struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BindTSIGKeySpec `json:"spec,omitempty"`
	Status ObjectStatus    `json:"status,omitempty"`
}

// BindTSIGKeyList is a list of BindTSIGKey.
// +kubebuilder:object:root=true
type BindTSIGKeyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BindTSIGKey `json:"items"`
}
