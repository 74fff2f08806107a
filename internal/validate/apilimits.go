package validate

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// maxObjectData is what the API server takes in one ConfigMap's or
// Secret's data (Kubernetes' MaxSecretSize, 1 MiB, the values summed).
const maxObjectData = 1 << 20

// checkNamespaces: every object's namespace becomes the namespace of every
// object rendered from it, and the API server takes only a DNS-1123 label.
func checkNamespaces(s *model.Set) diag.Results {
	var rs diag.Results
	for _, src := range s.Sources() {
		ns := src.Ref.Namespace
		if ns == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			rs.Errorf(src, "metadata.namespace", "cannot use namespace %q: it is not a DNS-1123 label (%s), so the API server would refuse every object rendered into it; use lower-case letters, digits and '-', at most 63", ns, strings.Join(errs, "; "))
		}
	}
	return rs
}

// checkObjectSizes: every rendered ConfigMap and Secret fits the API
// server's limits: data at most 1 MiB, annotations at most 256 KiB. Zone
// files are split over several ConfigMaps by the renderer; what cannot be
// split is the config ConfigMap (both named.conf files and agent.json, each
// zone a statement in both) and its zone-state annotation (each zone's
// serial and hash): at about 2,300 zones in one cluster they pass the
// limits and nothing could be applied. The renderer does not shard them;
// the cluster is refused, with the numbers, before anything is emitted.
func checkObjectSizes(clusters []*model.Cluster, objs []render.Object) diag.Results {
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
		fix := fmt.Sprintf("BindCluster %q serves %d zones; split them over more BindClusters (bind-fn does not shard this object)", c.Name, zones)
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
