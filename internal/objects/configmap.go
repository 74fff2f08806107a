package objects

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/internal/model"
)

// ConfigMap is a ConfigMap of the cluster (config or a zones shard). data is
// copied; annotations (e.g. a shard's zone list) are copied when not empty.
// It is never immutable: kubelet must swap the mounted files in place so the
// agent can reload without a restart.
func ConfigMap(c *model.Cluster, name, component string, data map[string]string, annotations map[string]string) *corev1.ConfigMap {
	d := copyMap(data)
	if d == nil {
		d = map[string]string{}
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(c, name, component, nil, annotations),
		Data:       d,
	}
}
