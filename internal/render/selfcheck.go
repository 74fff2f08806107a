package render

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/output"
	"git.unkin.net/unkin/bind-fn/internal/validate"
)

// maxObjectData is what the API server takes in one ConfigMap's or
// Secret's data (Kubernetes' MaxSecretSize, 1 MiB, the values summed).
const maxObjectData = 1 << 20

// SelfCheck is the renderer's check of its own output, run by Render: the
// rendered objects against the API server's size limits (checkObjectSizes),
// and the proof, after rendering, that every IP literal in every
// rendered named.conf comes from an input field (or is loopback, for the
// control and statistics channels): no pod IP and no address learnt at run
// time is ever rendered (docs/design.md#no-runtime-address). A hit is a bug in bind-fn, reported
// against the cluster.
func SelfCheck(clusters []*model.Cluster, objs []Object) diag.Results {
	rs := checkObjectSizes(clusters, objs)
	byName := map[string]*model.Cluster{}
	allowed := map[string]map[netip.Prefix]bool{}
	for _, c := range clusters {
		k := c.Namespace + "/" + layout.ConfigMapName(c.Name)
		byName[k] = c
		m := map[netip.Prefix]bool{}
		for _, a := range validate.InputAddresses(c) {
			m[a] = true
		}
		allowed[k] = m
	}
	for _, o := range objs {
		cm, ok := o.Obj.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		k := cm.Namespace + "/" + cm.Name
		files := []string{layout.NamedConfPrimary, layout.NamedConfSecondary}
		if cluster, _, ok := output.ShardOf(cm.Name); ok && byName[cm.Namespace+"/"+layout.ConfigMapName(cluster)] != nil {
			// A zones ConfigMap: its zone statements (docs/state.md#shards).
			k = cm.Namespace + "/" + layout.ConfigMapName(cluster)
			files = nil
			for key := range cm.Data {
				if strings.HasPrefix(key, "zones.") && strings.HasSuffix(key, ".conf") {
					files = append(files, key)
				}
			}
			sort.Strings(files)
		}
		c := byName[k]
		if c == nil {
			continue
		}
		for _, file := range files {
			var bad []string
			for _, lit := range nc.AddressLiterals(cm.Data[file]) {
				if lit.Addr().IsLoopback() || allowed[k][lit] {
					continue
				}
				bad = append(bad, lit.String())
			}
			if len(bad) > 0 {
				sort.Strings(bad)
				rs.Errorf(c.Src, "", "cannot render %s for BindCluster %q: it holds address(es) %s that no input field holds (a runtime address must never reach config); this is a bug in bind-fn, please report it", file, c.Name, strings.Join(bad, ", "))
			}
		}
	}
	return rs
}

// checkObjectSizes: every rendered ConfigMap and Secret fits the API
// server's limits: data at most 1 MiB, annotations at most 256 KiB. What
// grows with the zones is sharded over the zones ConfigMaps under
// ShardBudget (docs/state.md#shards), and a zone too large for one is an
// error on that zone before this check; a hit here is a bug in bind-fn,
// refused with the numbers before anything is emitted.
func checkObjectSizes(clusters []*model.Cluster, objs []Object) diag.Results {
	var rs diag.Results
	byNS := map[string]*model.Cluster{}
	for _, c := range clusters {
		byNS[c.Namespace+"/"+c.Name] = c
	}
	for _, o := range objs {
		m, ok := o.Obj.(metav1.Object)
		if !ok {
			continue
		}
		c := byNS[m.GetNamespace()+"/"+m.GetLabels()[objects.LabelInstance]]
		if c == nil {
			continue
		}
		kind, size, data := fmt.Sprintf("%T", o.Obj), 0, false
		switch v := o.Obj.(type) {
		case *corev1.ConfigMap:
			kind, data = "ConfigMap", true
			for _, d := range v.Data {
				size += len(d)
			}
			for _, d := range v.BinaryData {
				size += len(d)
			}
		case *corev1.Secret:
			kind, data = "Secret", true
			for _, d := range v.Data {
				size += len(d)
			}
			for _, d := range v.StringData {
				size += len(d)
			}
		}
		zones := 0
		for _, v := range c.Views {
			zones += len(v.Zones) + len(v.Policies)
		}
		fix := fmt.Sprintf("BindCluster %q serves %d zones; this is a bug in bind-fn (zones are sharded under %d bytes a ConfigMap), please report it", c.Name, zones, ShardBudget)
		if data && size > maxObjectData {
			rs.Errorf(c.Src, "", "cannot render %s %q: its data is %d bytes, over the %d the API server takes, so it could never be applied; %s", kind, m.GetName(), size, maxObjectData, fix)
		}
		if err := apivalidation.ValidateAnnotationsSize(m.GetAnnotations()); err != nil {
			big, n := "", 0
			for k, v := range m.GetAnnotations() {
				if len(v) > n {
					big, n = k, len(v)
				}
			}
			rs.Errorf(c.Src, "", "cannot render %s %q: its annotations are too large for the API server (%v; %q holds %d bytes), so it could never be applied; %s", kind, m.GetName(), err, big, n, fix)
		}
	}
	return rs
}
