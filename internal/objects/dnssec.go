package objects

import (
	corev1 "k8s.io/api/core/v1"

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
	return filesSecret(c, layout.DNSSECSecretName(c.Name), ComponentDNSSECKeys, files)
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
