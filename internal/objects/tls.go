package objects

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// Port names of the TLS listeners (spec.tls).
const (
	PortDoT = "dot"
	PortDoH = "doh"
)

// VolumeTLS mounts spec.tls.secretName at layout.TLSDir.
const VolumeTLS = "tls"

// ComponentTLS labels the Certificate.
const ComponentTLS = "tls"

// CertManagerAPIVersion is cert-manager's API.
const CertManagerAPIVersion = "cert-manager.io/v1"

// tlsContainerPorts are the named container's DoT and DoH ports.
func tlsContainerPorts(c *model.Cluster) []corev1.ContainerPort {
	t := c.TLS
	if t == nil {
		return nil
	}
	var out []corev1.ContainerPort
	if t.DoTPort != 0 {
		out = append(out, corev1.ContainerPort{Name: PortDoT, ContainerPort: int32(t.DoTPort), Protocol: corev1.ProtocolTCP})
	}
	if t.DoHPort != 0 {
		out = append(out, corev1.ContainerPort{Name: PortDoH, ContainerPort: int32(t.DoHPort), Protocol: corev1.ProtocolTCP})
	}
	return out
}

// tlsServicePorts are the Services' DoT and DoH ports, as the pods'.
func tlsServicePorts(c *model.Cluster) []corev1.ServicePort {
	var out []corev1.ServicePort
	for _, p := range tlsContainerPorts(c) {
		out = append(out, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, Port: p.ContainerPort, TargetPort: intstr.FromString(p.Name)})
	}
	return out
}

// tlsVolume is the spec.tls Secret, readable by the bind group only.
func tlsVolume(c *model.Cluster) (corev1.Volume, bool) {
	if c.TLS == nil {
		return corev1.Volume{}, false
	}
	return corev1.Volume{Name: VolumeTLS, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: c.TLS.SecretName, DefaultMode: ptr(int32(0o440)),
	}}}, true
}

// Certificate is cert-manager's Certificate, the fields the render sets
// (cert-manager.io/v1; its Go module is not a dependency for one type).
type Certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              CertificateSpec `json:"spec"`
}

// DeepCopyObject implements runtime.Object.
func (c *Certificate) DeepCopyObject() runtime.Object { return jsonCopy(c) }

// CertificateSpec is the part of cert-manager's spec the render writes.
type CertificateSpec struct {
	SecretName  string                `json:"secretName"`
	DNSNames    []string              `json:"dnsNames"`
	Duration    string                `json:"duration,omitempty"`
	RenewBefore string                `json:"renewBefore,omitempty"`
	IssuerRef   CertIssuerRef         `json:"issuerRef"`
	PrivateKey  CertificatePrivateKey `json:"privateKey"`
	Usages      []string              `json:"usages"`
}

// CertIssuerRef names the issuer.
type CertIssuerRef struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Group string `json:"group"`
}

// CertificatePrivateKey: a new ECDSA P-256 key at every renewal.
type CertificatePrivateKey struct {
	Algorithm      string `json:"algorithm"`
	Size           int    `json:"size"`
	RotationPolicy string `json:"rotationPolicy"`
}

// CertificateFor renders spec.tls.certificate; nil without it.
func CertificateFor(c *model.Cluster) *Certificate {
	if c.TLS == nil || c.TLS.Certificate == nil {
		return nil
	}
	cs := c.TLS.Certificate
	return &Certificate{
		TypeMeta:   metav1.TypeMeta{APIVersion: CertManagerAPIVersion, Kind: "Certificate"},
		ObjectMeta: objectMeta(c, layout.CertificateName(c.Name), ComponentTLS, nil, nil),
		Spec: CertificateSpec{
			SecretName:  c.TLS.SecretName,
			DNSNames:    cs.DNSNames,
			Duration:    cs.Duration,
			RenewBefore: cs.RenewBefore,
			IssuerRef:   CertIssuerRef{Name: cs.IssuerName, Kind: cs.IssuerKind, Group: cs.IssuerGroup},
			PrivateKey:  CertificatePrivateKey{Algorithm: "ECDSA", Size: 256, RotationPolicy: "Always"},
			Usages:      []string{"server auth", "digital signature", "key encipherment"},
		},
	}
}
