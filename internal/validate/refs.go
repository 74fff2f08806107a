package validate

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// ref is one reference field of an object.
type ref struct {
	src   diag.Source
	field string
	name  string
	kind  string // the kind it must name
}

// refs lists every reference field of the set.
func refs(s *model.Set) []ref {
	var out []ref
	add := func(src diag.Source, field, name, kind string) {
		if name != "" {
			out = append(out, ref{src, field, name, kind})
		}
	}
	for _, o := range s.Zones {
		sp := o.Obj.Spec
		add(o.Src, "spec.clusterRef", sp.ClusterRef, v1alpha1.KindBindCluster)
		add(o.Src, "spec.viewRef", sp.ViewRef, v1alpha1.KindBindView)
		add(o.Src, "spec.updateKeyRef", sp.UpdateKeyRef, v1alpha1.KindBindTSIGKey)
		add(o.Src, "spec.transferKeyRef", sp.TransferKeyRef, v1alpha1.KindBindTSIGKey)
		add(o.Src, "spec.dnssecPolicyRef", sp.DNSSECPolicyRef, v1alpha1.KindBindDNSSECPolicy)
	}
	for _, o := range s.Records {
		add(o.Src, "spec.zoneRef", o.Obj.Spec.ZoneRef, v1alpha1.KindBindZone)
	}
	for _, o := range s.Views {
		add(o.Src, "spec.clusterRef", o.Obj.Spec.ClusterRef, v1alpha1.KindBindCluster)
	}
	for _, o := range s.Keys {
		add(o.Src, "spec.clusterRef", o.Obj.Spec.ClusterRef, v1alpha1.KindBindCluster)
	}
	for _, o := range s.ACLs {
		add(o.Src, "spec.clusterRef", o.Obj.Spec.ClusterRef, v1alpha1.KindBindCluster)
	}
	for _, o := range s.DNSSECPolicies {
		add(o.Src, "spec.clusterRef", o.Obj.Spec.ClusterRef, v1alpha1.KindBindCluster)
	}
	for _, o := range s.Catalogs {
		sp := o.Obj.Spec
		add(o.Src, "spec.clusterRef", sp.ClusterRef, v1alpha1.KindBindCluster)
		add(o.Src, "spec.viewRef", sp.ViewRef, v1alpha1.KindBindView)
		add(o.Src, "spec.transferKeyRef", sp.TransferKeyRef, v1alpha1.KindBindTSIGKey)
	}
	for _, o := range s.Policies {
		add(o.Src, "spec.clusterRef", o.Obj.Spec.ClusterRef, v1alpha1.KindBindCluster)
		add(o.Src, "spec.viewRef", o.Obj.Spec.ViewRef, v1alpha1.KindBindView)
	}
	return out
}

// checkRefKinds explains a reference the model could not resolve when an
// object of another kind, or of the right kind in another namespace, has the
// name: the model's error says what is missing, this says what was meant.
func checkRefKinds(s *model.Set) diag.Results {
	var rs diag.Results
	type key struct{ kind, ns, name string }
	have := map[key]bool{}
	byName := map[string][]diag.ObjectRef{}
	for _, src := range s.Sources() {
		r := src.Ref
		have[key{r.Kind, r.Namespace, r.Name}] = true
		byName[r.Name] = append(byName[r.Name], r)
	}
	for _, r := range refs(s) {
		ns := r.src.Ref.Namespace
		if have[key{r.kind, ns, r.name}] {
			continue
		}
		var other, elsewhere []string
		for _, o := range byName[r.name] {
			switch {
			case o.Namespace == ns && o.Kind != r.kind:
				other = append(other, o.Kind)
			case o.Namespace != ns && o.Kind == r.kind:
				elsewhere = append(elsewhere, o.Namespace)
			}
		}
		sort.Strings(other)
		sort.Strings(elsewhere)
		switch {
		case len(other) > 0:
			rs = append(rs, diag.Result{Severity: diag.Info, Source: r.src, Field: r.field, Message: fmt.Sprintf(
				"cannot resolve %s %q: a %s named %q exists, but %s must name a %s", r.kind, r.name, other[0], r.name, r.field, r.kind)})
		case len(elsewhere) > 0:
			rs = append(rs, diag.Result{Severity: diag.Info, Source: r.src, Field: r.field, Message: fmt.Sprintf(
				"cannot resolve %s %q: one exists in namespace %q, but references resolve only in the referring object's namespace %q; move one of them", r.kind, r.name, elsewhere[0], ns)})
		}
	}
	return rs
}

// checkDuplicateObjects: the same kind, namespace and name twice (kustomize
// overlays, a copied file). The model reports duplicate BindClusters itself.
func checkDuplicateObjects(s *model.Set) diag.Results {
	var rs diag.Results
	seen := map[diag.ObjectRef]diag.Source{}
	for _, src := range s.Sources() {
		r := src.Ref
		if r.Kind == v1alpha1.KindBindCluster {
			continue
		}
		k := diag.ObjectRef{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
		if first, ok := seen[k]; ok {
			rs.Errorf(src, "metadata.name", "cannot use %s %q twice in namespace %q: also defined in %s; remove or rename one", r.Kind, r.Name, r.Namespace, where(first))
			continue
		}
		seen[k] = src
	}
	return rs
}

func where(s diag.Source) string {
	if s.File == "" {
		return s.Ref.String()
	}
	return fmt.Sprintf("%s (%s)", s.Ref, s.File)
}

// checkExternalTemplates: a key that a cluster with spec.secrets external
// imports gets no rendered Secret, so its secretTemplate stamps nothing
// (the importExisting case is checkSecretTemplates'). Once per key, however
// many clusters share it.
func checkExternalTemplates(clusters []*model.Cluster) diag.Results {
	var rs diag.Results
	seen := map[*model.Key]bool{}
	for _, c := range clusters {
		if !c.ExternalSecrets() {
			continue
		}
		for _, k := range c.Keys {
			t := k.Template
			if seen[k] || !k.External || k.Internal || t == nil || len(t.Labels) == 0 && len(t.Annotations) == 0 {
				continue
			}
			seen[k] = true
			rs.Warnf(k.Src, "spec.secretTemplate", "secretTemplate is ignored: BindCluster %q has spec.secrets external, so bind-fn renders no Secret for this key; label the Secret where it is made", c.Name)
		}
	}
	return rs
}

// checkSecretTemplates: a Secret template may add labels and annotations,
// never the managed app.kubernetes.io labels, and only valid ones.
func checkSecretTemplates(s *model.Set) diag.Results {
	var rs diag.Results
	for _, o := range s.Keys {
		t := o.Obj.Spec.SecretTemplate
		if t == nil {
			continue
		}
		if o.Obj.Spec.ImportExisting && (len(t.Labels) > 0 || len(t.Annotations) > 0) {
			rs.Warnf(o.Src, "spec.secretTemplate", "secretTemplate is ignored with importExisting: bind-fn renders no Secret for an imported key; label the Secret where it is made")
		}
		for _, k := range slices.Sorted(maps.Keys(t.Labels)) {
			f := fmt.Sprintf("spec.secretTemplate.labels[%s]", k)
			if strings.HasPrefix(k, "app.kubernetes.io/") {
				rs.Errorf(o.Src, f, "cannot set label %q in secretTemplate: bind-fn manages the app.kubernetes.io/ labels; use another prefix", k)
				continue
			}
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				rs.Errorf(o.Src, f, "cannot use %q as a label key: %s", k, strings.Join(errs, "; "))
			}
			if errs := validation.IsValidLabelValue(t.Labels[k]); len(errs) > 0 {
				rs.Errorf(o.Src, f, "cannot use %q as a label value: %s", t.Labels[k], strings.Join(errs, "; "))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(t.Annotations)) {
			if errs := validation.IsQualifiedName(strings.ToLower(k)); len(errs) > 0 {
				rs.Errorf(o.Src, fmt.Sprintf("spec.secretTemplate.annotations[%s]", k), "cannot use %q as an annotation key: %s", k, strings.Join(errs, "; "))
			}
		}
	}
	return rs
}

// checkObjectNames checks the names that reach named.conf, zone files or
// object names against their grammar.
func checkObjectNames(s *model.Set) diag.Results {
	var rs diag.Results
	for _, o := range s.Keys {
		sp := o.Obj.Spec
		name, field := sp.KeyName, "spec.keyName"
		if name == "" {
			name, field = o.Src.Ref.Name, "metadata.name"
		}
		if err := keyName(strings.TrimSuffix(name, ".")); err != nil {
			rs.Errorf(o.Src, field, "cannot use %q as a TSIG key name: %v", name, err)
		} else if reserved(name) {
			rs.Errorf(o.Src, field, "cannot define TSIG key %q: names starting %q are bind-fn's own (the rndc key %q is one; named would exit on a key defined twice); choose another name", name, reservedPrefix, layout.RNDCKeyName)
		}
		sn, f := sp.SecretName, "spec.secretName"
		if sn == "" {
			sn, f = o.Src.Ref.Name+"-tsig", "metadata.name"
		}
		if err := secretName(sn); err != nil {
			rs.Errorf(o.Src, f, "cannot name the key's Secret %q: %v", sn, err)
		}
		if _, ok := vocab.TSIGByName(sp.Algorithm); sp.Algorithm != "" && !ok {
			rs.Errorf(o.Src, "spec.algorithm", "cannot use TSIG algorithm %q: use one of %s", sp.Algorithm, strings.Join(slices.Sorted(slices.Values(vocab.TSIGNames())), ", "))
		}
	}
	for _, o := range s.ACLs {
		name, field := o.Obj.ConfName()
		if err := bindName(name, "ACL"); err != nil {
			rs.Errorf(o.Src, field, "cannot use %q as an ACL name: %v", name, err)
		} else if builtinACLs[strings.ToLower(name)] || strings.EqualFold(name, "key") {
			rs.Errorf(o.Src, field, "cannot define ACL %q: it is a BIND built-in; choose another name", name)
		} else if reserved(name) {
			rs.Errorf(o.Src, field, "cannot define ACL %q: names starting %q are bind-fn's own (the agent writes ACL %q, the cluster's peers, and named exits on an ACL defined twice); choose another name", name, reservedPrefix, layout.PeersACL)
		}
		if len(o.Obj.Spec.Addresses) == 0 {
			rs.Errorf(o.Src, "spec.addresses", "cannot define ACL %q without addresses: list at least one element (use none to match nothing)", name)
		}
	}
	for _, o := range s.DNSSECPolicies {
		name, field := o.Obj.ConfName()
		if err := bindName(name, "dnssec-policy"); err != nil {
			rs.Errorf(o.Src, field, "cannot use %q as a dnssec-policy name: %v", name, err)
		} else if builtinPolicies[strings.ToLower(name)] {
			rs.Errorf(o.Src, field, "cannot define dnssec-policy %q: it is a BIND built-in; choose another name", name)
		}
	}
	for _, o := range s.Views {
		name, field := o.Obj.Spec.ViewName, "spec.viewName"
		if name == "" {
			name, field = o.Src.Ref.Name, "metadata.name"
		}
		if err := viewName(name); err != nil {
			rs.Errorf(o.Src, field, "cannot use %q as a view name: %v", name, err)
		} else if strings.EqualFold(name, "_bind") || strings.EqualFold(name, "_default") {
			rs.Errorf(o.Src, field, "cannot define view %q: the name is reserved by BIND", name)
		}
	}
	return rs
}

// scoped are the objects of one kind in scope of a cluster: its own and the
// namespace's shared ones.
func inScope(c *model.Cluster, src diag.Source, clusterRef string) bool {
	return src.Ref.Namespace == c.Namespace && (clusterRef == "" || clusterRef == c.Name)
}

// checkScopedNames: two keys, ACLs or dnssec-policies in scope of one
// cluster with the same BIND name (a shared one and a cluster-scoped one,
// say) would define it twice; a user key must not take the name of a
// generated transfer key.
func checkScopedNames(s *model.Set, c *model.Cluster) diag.Results {
	var rs diag.Results
	type first struct {
		src   diag.Source
		field string
	}
	keys := map[string]first{}
	for _, v := range c.Views {
		if v.TransferKey != nil && v.TransferKey.Internal {
			keys[strings.ToLower(v.TransferKey.KeyName)] = first{src: c.Src}
		}
	}
	for _, o := range s.Keys {
		sp := o.Obj.Spec
		if !inScope(c, o.Src, sp.ClusterRef) {
			continue
		}
		name, field := sp.KeyName, "spec.keyName"
		if name == "" {
			name, field = o.Src.Ref.Name, "metadata.name"
		}
		k := strings.ToLower(strings.TrimSuffix(name, "."))
		if f, dup := keys[k]; dup {
			if f.field == "" {
				rs.Errorf(o.Src, field, "cannot define TSIG key %q for BindCluster %q: bind-fn generates a transfer key of that name; choose another name", name, c.Name)
			} else {
				rs.Errorf(o.Src, field, "cannot define TSIG key %q twice for BindCluster %q: %s already defines it (key names are case-insensitive); rename one", name, c.Name, where(f.src))
			}
			continue
		}
		keys[k] = first{o.Src, field}
	}
	// BIND compares ACL names case-insensitively ("attempt to redefine acl").
	uniqueNames(&rs, c, s.ACLs, "ACL", func(a *v1alpha1.BindACL) (string, string, string) {
		name, field := a.ConfName()
		return a.Spec.ClusterRef, strings.ToLower(name), field
	})
	uniqueNames(&rs, c, s.DNSSECPolicies, "dnssec-policy", func(p *v1alpha1.BindDNSSECPolicy) (string, string, string) {
		name, field := p.ConfName()
		return p.Spec.ClusterRef, name, field
	})
	return rs
}

// uniqueNames reports a named.conf name (an ACL's, a dnssec-policy's)
// defined twice among the objects in c's scope. fields gives an object's
// clusterRef, its name in named.conf and the field that name comes from.
func uniqueNames[T any](rs *diag.Results, c *model.Cluster, objs []model.Obj[T], what string, fields func(*T) (clusterRef, name, field string)) {
	seen := map[string]diag.Source{}
	for _, o := range objs {
		ref, name, field := fields(o.Obj)
		if !inScope(c, o.Src, ref) {
			continue
		}
		if f, dup := seen[name]; dup {
			rs.Errorf(o.Src, field, "cannot define %s %q twice for BindCluster %q: %s already defines it (BIND compares ACL names case-insensitively); rename one", what, name, c.Name, where(f))
			continue
		}
		seen[name] = o.Src
	}
}
