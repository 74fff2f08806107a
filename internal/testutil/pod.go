package testutil

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
	"git.unkin.net/unkin/bind-fn/internal/agent/serversconf"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// Cluster is the rendered objects of one BindCluster, by kind.
type Cluster struct {
	Name        string
	ConfigMaps  map[string]*corev1.ConfigMap
	Secrets     map[string]*corev1.Secret
	StatefulSet *appsv1.StatefulSet
	Services    map[string]*corev1.Service
}

// Clusters groups rendered objects by the cluster they belong to.
func Clusters(t testing.TB, objs []render.Object) map[string]*Cluster {
	t.Helper()
	out := map[string]*Cluster{}
	get := func(labels map[string]string) *Cluster {
		name := labels["app.kubernetes.io/instance"]
		if out[name] == nil {
			out[name] = &Cluster{Name: name, ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{}, Services: map[string]*corev1.Service{}}
		}
		return out[name]
	}
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *corev1.ConfigMap:
			get(v.Labels).ConfigMaps[v.Name] = v
		case *corev1.Secret:
			get(v.Labels).Secrets[v.Name] = v
		case *appsv1.StatefulSet:
			get(v.Labels).StatefulSet = v
		case *corev1.Service:
			get(v.Labels).Services[v.Name] = v
		}
	}
	return out
}

// Mount is one volume mount of a rendered pod's named container, with the
// files the kubelet would project into it.
type Mount struct {
	// Path is where the container mounts it.
	Path string
	// Projected: a ConfigMap or Secret volume, whose Files the kubelet
	// lays in its ..data layout. An optional ConfigMap the render does not
	// hold is projected empty.
	Projected bool
	// Absent: a Secret the render does not hold (an imported key's): the
	// kubelet would wait for it; nothing is projected.
	Absent bool
	Files  map[string][]byte
}

// NamedMounts are the mounts of the named container of c's pods and what
// the kubelet fills them with, from the rendered objects. A mount through
// subPath (which never updates), one without a volume, or a ConfigMap the
// render lacks and does not mark optional fails t.
func NamedMounts(t testing.TB, c *Cluster) []Mount {
	t.Helper()
	if c.StatefulSet == nil {
		t.Fatalf("cluster %q has no StatefulSet", c.Name)
	}
	spec := c.StatefulSet.Spec.Template.Spec
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	for _, pvc := range c.StatefulSet.Spec.VolumeClaimTemplates {
		vols[pvc.Name] = corev1.Volume{Name: pvc.Name}
	}
	var out []Mount
	for _, ctr := range spec.Containers {
		if ctr.Name != "named" {
			continue
		}
		for _, m := range ctr.VolumeMounts {
			v, ok := vols[m.Name]
			if !ok {
				t.Fatalf("mount %q has no volume", m.Name)
			}
			if m.SubPath != "" {
				t.Fatalf("mount %q uses subPath: such mounts never update", m.Name)
			}
			mt := Mount{Path: m.MountPath}
			switch {
			case v.ConfigMap != nil:
				cm := c.ConfigMaps[v.ConfigMap.Name]
				optional := v.ConfigMap.Optional != nil && *v.ConfigMap.Optional
				if cm == nil && !optional {
					t.Fatalf("volume %q: no ConfigMap %q rendered", v.Name, v.ConfigMap.Name)
				}
				mt.Projected, mt.Files = true, map[string][]byte{}
				if cm != nil { // an optional ConfigMap that does not exist mounts empty
					for k, s := range cm.Data {
						mt.Files[k] = []byte(s)
					}
				}
			case v.Secret != nil:
				s := c.Secrets[v.Secret.SecretName]
				if s == nil {
					mt.Absent = true
					break
				}
				mt.Projected, mt.Files = true, map[string][]byte{}
				for k, b := range s.Data {
					mt.Files[k] = b
				}
				for k, v := range s.StringData {
					mt.Files[k] = []byte(v)
				}
			}
			out = append(out, mt)
		}
	}
	return out
}

// LayPod writes the volumes of a rendered cluster's pod under root, where the
// StatefulSet mounts them, in kubelet's layout (files behind a ..data link),
// and stands in for the agent's runtime files: servers.conf with fixed
// documentation addresses (192.0.2.0/24), the rndc key and the imported
// key includes.
// A Secret the render does not hold is laid empty; other volumes are
// empty directories.
func LayPod(t testing.TB, root string, c *Cluster) {
	t.Helper()
	spec := c.StatefulSet.Spec.Template.Spec
	for _, m := range NamedMounts(t, c) {
		dir := filepath.Join(root, m.Path)
		switch {
		case m.Projected, m.Absent:
			WriteKubeletDir(t, dir, m.Files)
		default:
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The agent lays each --configmap NAME=LIVE:MOUNT into LIVE, from the
	// API server or, as here (no API server), from the mount.
	for _, ctr := range spec.Containers {
		args := append(append([]string(nil), ctr.Command...), ctr.Args...)
		for i := 0; ctr.Name == "named" && i+1 < len(args); i++ {
			if args[i] != "--configmap" {
				continue
			}
			_, dirs, _ := strings.Cut(args[i+1], "=")
			live, mount, ok := strings.Cut(dirs, ":")
			if !ok {
				t.Fatalf("--configmap %q: want NAME=LIVE:MOUNT", args[i+1])
			}
			files := map[string][]byte{}
			ents, _ := os.ReadDir(filepath.Join(root, mount))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "..") {
					continue
				}
				b, err := os.ReadFile(filepath.Join(root, mount, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				files[e.Name()] = b
			}
			WriteKubeletDir(t, filepath.Join(root, live), files)
		}
	}
	agentDoc := AgentConfig(t, c)
	// servers.conf as the agent writes it, every host of list i resolved
	// to 192.0.2.(10+10i+j).
	var lists []serversconf.List
	for i, l := range agentDoc.ServerLists {
		sl := serversconf.List{Name: l.Name, Key: l.Key, Port: l.Port, ACLOnly: l.ACLOnly, TLS: l.TLS}
		for j := range l.Hosts {
			sl.IPs = append(sl.IPs, net.IPv4(192, 0, 2, byte(10+i*10+j)))
		}
		lists = append(lists, sl)
	}
	servers, err := serversconf.Write(lists)
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(root, layout.RunFile(layout.ServersInclude)), []byte(servers))
	// The rndc key the agent makes at start (no Secret holds it).
	WriteFile(t, filepath.Join(root, layout.RNDCKeyInclude()), []byte(fmt.Sprintf("key %q { algorithm hmac-sha256; secret \"c2VjcmV0LXNlY3JldC1zZWNyZXQ=\"; };\n", layout.RNDCKeyName)))
	for _, k := range agentDoc.ImportedKeys {
		WriteFile(t, filepath.Join(root, k.Include), []byte(fmt.Sprintf("key %q { algorithm %s; secret \"c2VjcmV0LXNlY3JldC1zZWNyZXQ=\"; };\n", k.KeyName, k.Algorithm)))
	}
	for _, s := range agentDoc.SeedZones {
		data, err := os.ReadFile(filepath.Join(root, s.Source))
		if err != nil {
			t.Fatalf("seed zone %s: %v", s.Zone, err)
		}
		WriteFile(t, filepath.Join(root, s.Dest), data)
	}
}

// WriteKubeletDir writes files the way kubelet projects a volume
// (kubeletdir.Write: the data in a timestamped directory, ..data linking to
// it, each file a link through ..data). Calling it again swaps ..data
// atomically, like an update.
func WriteKubeletDir(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	if err := kubeletdir.Write(dir, files); err != nil {
		t.Fatal(err)
	}
}

// WriteFile writes a file, creating its directory.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
