package validate

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// checkObjects reports what in a cluster's spec the object builders
// (internal/objects) cannot turn into objects the API server accepts, or
// would silently ignore. The builders never fail and check nothing: every
// Kubernetes value is checked here, with apimachinery's own validation
// functions where the API server uses them.
func checkObjects(c *model.Cluster) diag.Results {
	var rs diag.Results
	sp := c.Spec
	if sp.Storage != nil && sp.Storage.Size != "" {
		if q, err := resource.ParseQuantity(sp.Storage.Size); err != nil {
			rs.Errorf(c.Src, "spec.storage.size", "cannot use %q as a volume size: want a quantity such as \"1Gi\"", sp.Storage.Size)
		} else if q.Sign() <= 0 {
			rs.Errorf(c.Src, "spec.storage.size", "cannot use %q as a volume size: it must be positive", sp.Storage.Size)
		}
	}
	if sp.HiddenPrimary && sp.Replicas < 2 {
		rs.Errorf(c.Src, "spec.hiddenPrimary", "a hidden primary needs a secondary to answer queries: set spec.replicas to 2 or more, or drop spec.hiddenPrimary")
	}
	if mp := c.MetricsPort(); mp < 1 || mp > 65535 || mp == layout.DNSPort || mp == layout.RNDCPort || mp == layout.StatisticsPort {
		rs.Errorf(c.Src, "spec.agent.metricsPort", "cannot use port %d for the agent: it must be 1-65535 and not %d (DNS), %d (rndc) or %d (statistics)", mp, layout.DNSPort, layout.RNDCPort, layout.StatisticsPort)
	}
	fieldErrors(&rs, c.Src, metavalidation.ValidateLabels(sp.NodeSelector, field.NewPath("spec", "nodeSelector")))
	if sp.Storage != nil && sp.Storage.StorageClassName != nil && *sp.Storage.StorageClassName != "" {
		for _, e := range validation.IsDNS1123Subdomain(*sp.Storage.StorageClassName) {
			rs.Errorf(c.Src, "spec.storage.storageClassName", "cannot use %q as a storage class name: %s", *sp.Storage.StorageClassName, e)
		}
	}
	if sp.PriorityClassName != "" {
		for _, e := range validation.IsDNS1123Subdomain(sp.PriorityClassName) {
			rs.Errorf(c.Src, "spec.priorityClassName", "cannot use %q as a priority class name: %s", sp.PriorityClassName, e)
		}
	}
	checkService(&rs, c, "spec.service", sp.Service)
	checkService(&rs, c, "spec.primaryService", sp.PrimaryService)
	checkMonitoring(&rs, c, sp.Monitoring)
	return rs
}

// checkMonitoring: spec.monitoring's labels are labels, its thresholds in
// the CRD's ranges (0 is the default).
func checkMonitoring(rs *diag.Results, c *model.Cluster, m *v1alpha1.MonitoringSpec) {
	if m == nil {
		return
	}
	fieldErrors(rs, c.Src, metavalidation.ValidateLabels(m.Labels, field.NewPath("spec", "monitoring", "labels")))
	if d := m.SignatureExpiryDays; d < 0 || d > 365 {
		rs.Errorf(c.Src, "spec.monitoring.signatureExpiryDays", "cannot alert %d days before signatures expire: want 1-365 (default %d)", d, model.DefaultSignatureExpiryDays)
	}
	if p := m.ServfailPercent; p < 0 || p > 100 {
		rs.Errorf(c.Src, "spec.monitoring.servfailPercent", "cannot use %d%% as the SERVFAIL threshold: want 1-100 (default %d)", p, model.DefaultServfailPercent)
	}
}

func checkService(rs *diag.Results, c *model.Cluster, field string, s *v1alpha1.ClusterServiceSpec) {
	if s == nil {
		return
	}
	typ := s.Type
	if typ == "" {
		typ = corev1.ServiceTypeClusterIP
	}
	external := typ == corev1.ServiceTypeLoadBalancer || typ == corev1.ServiceTypeNodePort
	switch typ {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		rs.Errorf(c.Src, field+".type", "unknown Service type %q: want ClusterIP, NodePort or LoadBalancer", s.Type)
		return
	}
	if s.ClusterIP == corev1.ClusterIPNone {
		rs.Errorf(c.Src, field+".clusterIP", "cannot make this Service headless: it is a virtual IP (the headless Service is %q)", layout.HeadlessServiceName(c.Name))
	} else if s.ClusterIP != "" {
		fieldErrors(rs, c.Src, validation.IsValidIPForLegacyField(fieldPath(field+".clusterIP"), s.ClusterIP, true, nil))
	}
	if s.LoadBalancerIP != "" {
		fieldErrors(rs, c.Src, validation.IsValidIPForLegacyField(fieldPath(field+".loadBalancerIP"), s.LoadBalancerIP, true, nil))
	}
	if s.LoadBalancerClass != nil {
		fieldErrors(rs, c.Src, metavalidation.ValidateLabelName(*s.LoadBalancerClass, fieldPath(field+".loadBalancerClass")))
	}
	fieldErrors(rs, c.Src, metavalidation.ValidateLabels(s.Labels, fieldPath(field+".labels")))
	fieldErrors(rs, c.Src, apivalidation.ValidateAnnotations(s.Annotations, fieldPath(field+".annotations")))
	switch s.ExternalTrafficPolicy {
	case "":
	case corev1.ServiceExternalTrafficPolicyLocal, corev1.ServiceExternalTrafficPolicyCluster:
		if !external {
			rs.Errorf(c.Src, field+".externalTrafficPolicy", "externalTrafficPolicy applies only to a LoadBalancer or NodePort Service, not %s: set %s.type or drop it", typ, field)
		} else if s.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyCluster && c.ClientAddressesMatter() {
			rs.Warnf(c.Src, field+".externalTrafficPolicy", "externalTrafficPolicy Cluster hides client addresses behind node addresses, but this cluster matches clients by address (views, ACLs, allow-query, allow-recursion or rate-limit): use Local")
		}
	default:
		rs.Errorf(c.Src, field+".externalTrafficPolicy", "unknown externalTrafficPolicy %q: want Local or Cluster", s.ExternalTrafficPolicy)
	}
	if typ != corev1.ServiceTypeLoadBalancer {
		if s.LoadBalancerIP != "" {
			rs.Warnf(c.Src, field+".loadBalancerIP", "%s", ignored("loadBalancerIP", typ))
		}
		if s.LoadBalancerClass != nil {
			rs.Warnf(c.Src, field+".loadBalancerClass", "%s", ignored("loadBalancerClass", typ))
		}
	}
}

func ignored(what string, typ corev1.ServiceType) string {
	return fmt.Sprintf("%s is ignored on a %s Service: set the type to LoadBalancer or drop it", what, typ)
}

// fieldPath turns "spec.service.labels" into a field.Path.
func fieldPath(p string) *field.Path {
	parts := strings.Split(p, ".")
	return field.NewPath(parts[0], parts[1:]...)
}

// fieldErrors reports apimachinery's field errors as located results, in
// field order.
func fieldErrors(rs *diag.Results, src diag.Source, errs field.ErrorList) {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	for _, e := range errs {
		rs.Errorf(src, e.Field, "the API server would refuse this value: %s", e.ErrorBody())
	}
}

// checkObjectIDs: two objects rendered with one kind, namespace and name
// would overwrite each other when applied (kubectl and the API server keep
// the last). Clusters whose generated names collide (dns's Service
// dns-primary and cluster dns-primary's serve Service), and a BindTSIGKey
// whose Secret takes a generated Secret's name or another key's, are
// located errors on the later object.
func checkObjectIDs(clusters []*model.Cluster) diag.Results {
	var rs diag.Results
	type owner struct {
		src   diag.Source
		field string
		what  string
	}
	seen := map[string]owner{}
	reported := map[string]bool{}
	claim := func(kind, ns, name string, o owner) {
		id := kind + " " + ns + "/" + name
		if first, dup := seen[id]; dup {
			if first.src == o.src && first.what == o.what {
				return // one key shared by the namespace's clusters: one Secret
			}
			if reported[id+" "+o.what] {
				return // a shared key, met again in the next cluster
			}
			reported[id+" "+o.what] = true
			rs.Errorf(o.src, o.field, "cannot render %s %s/%s for %s: %s already renders it (%s), and applying both would keep only one; rename one of them", kind, ns, name, o.what, where(first.src), first.what)
			return
		}
		seen[id] = o
	}
	for _, c := range clusters {
		cl := func(what string) owner {
			return owner{c.Src, "metadata.name", fmt.Sprintf("BindCluster %q (%s)", c.Name, what)}
		}
		claim("StatefulSet", c.Namespace, c.Name, cl("its StatefulSet"))
		claim("PodDisruptionBudget", c.Namespace, layout.PDBName(c.Name), cl("its PodDisruptionBudget"))
		claim("ServiceAccount", c.Namespace, layout.AgentServiceAccountName(c.Name), cl("its agent's ServiceAccount, Role and RoleBinding"))
		claim("Service", c.Namespace, layout.ServeServiceName(c.Name), cl("its serve Service"))
		claim("Service", c.Namespace, layout.HeadlessServiceName(c.Name), cl("its headless Service"))
		claim("Service", c.Namespace, layout.PrimaryServiceName(c.Name), cl("its primary Service"))
		claim("ConfigMap", c.Namespace, layout.ConfigMapName(c.Name), cl("its config ConfigMap"))
		if !c.ExternalSecrets() {
			claim("Secret", c.Namespace, layout.KeysSecretName(c.Name), cl("its keys Secret"))
		}
		for _, v := range c.Views {
			if k := v.TransferKey; k != nil && k.Internal {
				claim("Secret", c.Namespace, k.SecretName, cl(fmt.Sprintf("the transfer key Secret of view %q", v.Name)))
			}
		}
	}
	for _, c := range clusters {
		for _, k := range c.Keys {
			if k.Internal {
				continue
			}
			field := "spec.secretName"
			if k.Src.Ref.Name+"-tsig" == k.SecretName {
				field = "metadata.name"
			}
			what := fmt.Sprintf("BindTSIGKey %q", k.Src.Ref.Name)
			if k.Import {
				what += " (imported)"
			}
			claim("Secret", c.Namespace, k.SecretName, owner{k.Src, field, what})
		}
	}
	return rs
}
