package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ObjectStatus is the status shape of the non-cluster kinds. bind-fn is a pure
// function and writes no status; the decoder ignores status entirely, so
// manifests exported from the old operator (whatever their status held) decode.
type ObjectStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
