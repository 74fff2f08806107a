package objects

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// Components of the DNSSEC objects.
const (
	ComponentDNSSECKeys = "dnssec-keys"
	ComponentDNSSECDS   = "dnssec-ds"
)

// VolumeDNSSEC is the pod's volume of the DNSSEC key Secret.
const VolumeDNSSEC = "dnssec"

// DNSSECSecret is the <cluster>-dnssec Secret: the three files of every
// signing key of every signed zone of the cluster.
func DNSSECSecret(c *model.Cluster, files map[string][]byte) *corev1.Secret {
	data := make(map[string][]byte, len(files))
	for k, v := range files {
		data[k] = v
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(c, layout.DNSSECSecretName(c.Name), ComponentDNSSECKeys, nil, nil),
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// DSConfigMap is the <cluster>-dnssec-ds ConfigMap: the DS records of every
// signed zone (public), and the record of the keys they were made from.
func DSConfigMap(c *model.Cluster, data, annotations map[string]string) *corev1.ConfigMap {
	return ConfigMap(c, layout.DSConfigMapName(c.Name), ComponentDNSSECDS, data, annotations)
}

// dnssecVolume is the optional volume of the DNSSEC key Secret: mounted on
// every pod, present or not, so the first signed zone changes no volume.
func dnssecVolume(c *model.Cluster) corev1.Volume {
	return corev1.Volume{Name: VolumeDNSSEC, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: layout.DNSSECSecretName(c.Name), DefaultMode: ptr(int32(0o440)), Optional: ptr(true),
	}}}
}
