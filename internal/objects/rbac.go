package objects

import (
	"path"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// WatchedConfigMap is a ConfigMap the agent reads from the API server into
// Live, the kubelet's mount at Mount the fallback (agent --configmap).
type WatchedConfigMap struct{ Name, Live, Mount string }

// WatchedConfigMaps are the config ConfigMap and every zones slot the pod
// mounts (an optional slot's ConfigMap may not exist: the agent then shows
// an empty directory, as the kubelet does).
func WatchedConfigMaps(c *model.Cluster, p PodPlan) []WatchedConfigMap {
	out := []WatchedConfigMap{{layout.ConfigMapName(c.Name), layout.ConfigDir, layout.MountedConfigDir}}
	for i := 0; i < ZoneShardCapacity(len(p.ZoneConfigMaps)); i++ {
		name := layout.ZonesConfigMapName(c.Name, i)
		if i < len(p.ZoneConfigMaps) {
			name = p.ZoneConfigMaps[i]
		}
		out = append(out, WatchedConfigMap{name, path.Join(layout.ZonesDir, strconv.Itoa(i)), path.Join(layout.MountedZonesDir, strconv.Itoa(i))})
	}
	return out
}

// AgentRBAC is the pods' ServiceAccount, and a Role and RoleBinding that
// let it get, list and watch exactly the cluster's own ConfigMaps, by name:
// a kubelet updates a mounted ConfigMap only when it next syncs the pod
// (a minute by default), the agent's watch within a second
// (docs/kubelet-sync.md). Nothing else: no Secret, no write, no other object.
func AgentRBAC(c *model.Cluster, p PodPlan) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	name := layout.AgentServiceAccountName(c.Name)
	sa := &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: objectMeta(c, name, ComponentServer, nil, nil),
		// The token reaches the named container alone, through its own
		// projected volume (podVolumes).
		AutomountServiceAccountToken: ptr(false),
	}
	var names []string
	for _, w := range WatchedConfigMaps(c, p) {
		names = append(names, w.Name)
	}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: objectMeta(c, name, ComponentServer, nil, nil),
		Rules: []rbacv1.PolicyRule{{
			APIGroups:     []string{""},
			Resources:     []string{"configmaps"},
			ResourceNames: names,
			Verbs:         []string{"get", "list", "watch"},
		}},
	}
	rb := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: objectMeta(c, name, ComponentServer, nil, nil),
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: c.Namespace}},
	}
	return sa, role, rb
}

// apiTokenVolume is the named container's in-cluster credentials: a bound
// service account token (the kubelet rotates it), the cluster's CA and the
// namespace, where client libraries and the agent look for them.
func apiTokenVolume() corev1.Volume {
	return corev1.Volume{Name: VolumeAPIToken, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr(int32(0o440)),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3607))}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}
