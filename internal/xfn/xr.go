// Package xfn adapts the pipeline to Crossplane's composition function
// protocol: the XBindCluster composite resource (and BindZone/DNSRecord
// objects selected as required resources) in, composed Kubernetes objects out.
// The conversion between the XR and the pipeline's items is plain Go (this
// file); fn.go holds the gRPC side.
package xfn

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// The composite resource. It lives in its own group, xbind.unkin.net, so the
// bind.unkin.net group stays the CRDs' alone (fn-render rejects unknown kinds
// of that group), and a legacy cluster-scoped XRD (apiextensions v1, with a
// claim) can sit beside the v2 one under another kind.
const (
	Group      = "xbind.unkin.net"
	Version    = "v1alpha1"
	Kind       = "XBindCluster"
	Plural     = "xbindclusters"
	APIVersion = Group + "/" + Version
)

// The legacy, cluster-scoped composite and its claim, for Crossplane v1.x
// (and v2's LegacyCluster scope): the same schema as XBindCluster, in the
// same group under other kinds, so both XRDs (and the CRDs Crossplane makes
// of them: xbindclusters, xlegacybindclusters and bindclusterclaims, all
// .xbind.unkin.net) can be installed on one control plane.
const (
	LegacyKind   = "XLegacyBindCluster"
	LegacyPlural = "xlegacybindclusters"
	ClaimKind    = "BindClusterClaim"
	ClaimPlural  = "bindclusterclaims"
)

// NamespaceField is the spec field of a cluster-scoped composite created
// without a claim that names the namespace to render into. With a claim,
// the claim's namespace is used and this field may only repeat it.
const NamespaceField = "namespace"

// SelectorLabel selects separate BindZone and DNSRecord objects as required
// resources: objects in the XR's namespace labelled
// bind.unkin.net/cluster: <XR name> join the XR's inline ones.
const SelectorLabel = "bind.unkin.net/cluster"

// Requirement names of the required resources.
const (
	RequiredZones   = "bindzones"
	RequiredRecords = "dnsrecords"
)

// List is one inline list of the XR's spec and the kind of its items.
type List struct {
	Field string
	Kind  string
}

// Lists are the inline lists of XBindCluster.spec, in the order the model
// builds them. Every other spec field belongs to the cluster.
var Lists = []List{
	{Field: "acls", Kind: v1alpha1.KindBindACL},
	{Field: "keys", Kind: v1alpha1.KindBindTSIGKey},
	{Field: "views", Kind: v1alpha1.KindBindView},
	{Field: "dnssecPolicies", Kind: v1alpha1.KindBindDNSSECPolicy},
	{Field: "catalogs", Kind: v1alpha1.KindBindCatalogZone},
	{Field: "zones", Kind: v1alpha1.KindBindZone},
	{Field: "records", Kind: v1alpha1.KindDNSRecord},
	{Field: "policies", Kind: v1alpha1.KindBindPolicy},
}

// MachineryFields are spec fields Crossplane owns (v2 nests them under
// spec.crossplane; legacy v1 XRs keep them at spec level). They are not
// part of the cluster.
var MachineryFields = []string{
	"crossplane", "claimRef", "compositionRef", "compositionRevisionRef", "compositionRevisionSelector",
	"compositionSelector", "compositionUpdatePolicy", "environmentConfigRefs", "publishConnectionDetailsTo",
	"resourceRefs", "writeConnectionSecretToRef",
}

// clusterScoped kinds carry spec.clusterRef; inline items default it to the
// XR's name.
var clusterScoped = map[string]bool{
	v1alpha1.KindBindACL: true, v1alpha1.KindBindTSIGKey: true, v1alpha1.KindBindView: true,
	v1alpha1.KindBindDNSSECPolicy: true, v1alpha1.KindBindCatalogZone: true, v1alpha1.KindBindZone: true,
	v1alpha1.KindBindPolicy: true,
}

// Target is where a composite's objects are rendered: the BIND cluster's
// name and namespace. A namespaced (v2) composite renders into its own
// namespace under its own name. A cluster-scoped one created by a claim
// renders into the claim's namespace under the claim's name (Crossplane
// names the composite <claim>-<suffix>; the application team knows the
// claim); one without a claim renders into spec.namespace under its name.
type Target struct {
	Name, Namespace string
	// Claim is the claim's identity, when there is one.
	Claim *diag.ObjectRef
}

// Placement works out the Target of a composite. A cluster-scoped
// composite with neither a claim nor spec.namespace is an error: there is
// no namespace to render into.
func Placement(xr map[string]any) (Target, diag.Results) {
	meta, _ := xr["metadata"].(map[string]any)
	spec, _ := xr["spec"].(map[string]any)
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	name, ns := str(meta, "name"), str(meta, "namespace")
	kind, apiVersion := str(xr, "kind"), str(xr, "apiVersion")
	ref := diag.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}
	src := diag.Source{Ref: ref, File: fmt.Sprintf("%s %s", kind, name)}
	var rs diag.Results
	want, hasWant := spec[NamespaceField]
	wantNS, _ := want.(string)
	if hasWant && (wantNS == "" || !isDNSLabel(wantNS)) {
		rs.Errorf(src, "spec."+NamespaceField, "%q is not a namespace name (a DNS label: lower case letters, digits and '-')", fmt.Sprint(want))
		return Target{}, rs
	}
	if ns != "" { // a namespaced (v2) composite
		if hasWant && wantNS != ns {
			rs.Errorf(src, "spec."+NamespaceField, "a namespaced %s renders into its own namespace %q: remove spec.%s (%q)", kind, ns, NamespaceField, wantNS)
		}
		return Target{Name: name, Namespace: ns}, rs
	}
	// v1-style legacy composites keep the claim reference at spec level; a
	// v2 Cluster/LegacyCluster one may have it under spec.crossplane.
	claim, _ := spec["claimRef"].(map[string]any)
	if claim == nil {
		if xp, ok := spec["crossplane"].(map[string]any); ok {
			claim, _ = xp["claimRef"].(map[string]any)
		}
	}
	if claim != nil {
		c := diag.ObjectRef{APIVersion: str(claim, "apiVersion"), Kind: str(claim, "kind"), Namespace: str(claim, "namespace"), Name: str(claim, "name")}
		if c.Namespace == "" || c.Name == "" {
			rs.Errorf(src, "spec.claimRef", "the claim reference names no namespace and name: Crossplane sets both when it creates a composite for a claim")
			return Target{}, rs
		}
		// The claim's namespace is an isolation boundary: a claim's spec
		// (copied into the composite) must not send its objects elsewhere.
		if hasWant && wantNS != c.Namespace {
			rs.Errorf(src, "spec."+NamespaceField, "the objects of a claim land in the claim's namespace %q, not %q: remove spec.%s from %s %s/%s",
				c.Namespace, wantNS, NamespaceField, c.Kind, c.Namespace, c.Name)
			return Target{}, rs
		}
		return Target{Name: c.Name, Namespace: c.Namespace, Claim: &c}, rs
	}
	if hasWant {
		return Target{Name: name, Namespace: wantNS}, rs
	}
	rs.Errorf(src, "spec."+NamespaceField, "cannot render a cluster-scoped %s without a claim: there is no namespace to render into. "+
		"Create it through a %s (its objects land in the claim's namespace), or set spec.%s", kind, ClaimKind, NamespaceField)
	return Target{}, rs
}

func isDNSLabel(s string) bool {
	if len(s) > 63 {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return s != ""
}

// Locator maps results about items made from an XR back to the XR's field
// paths, so the user is pointed at spec.zones[3].spec.records[0].
type Locator struct {
	// XR is the composite's identity (Kind namespace/name; no namespace
	// when it is cluster scoped).
	XR diag.ObjectRef
	// Target is where the XR's objects are rendered.
	Target Target
	// prefix of each inline item: "" for the cluster, spec.zones[3] ...
	prefix map[diag.ObjectRef]string
}

// Field returns the result's field path inside the XR, and whether the
// result is about the XR at all (a required resource's is not).
func (l *Locator) Field(r diag.Result) (string, bool) {
	p, ok := l.prefix[r.Source.Ref]
	if !ok {
		return r.Field, false
	}
	if p == "" { // the cluster: its spec is the XR's spec
		return r.Field, true
	}
	f := r.Field
	switch {
	case f == "" || f == "kind" || f == "apiVersion":
		return p, true
	case f == "metadata.name":
		return p + ".name", true
	case strings.HasPrefix(f, "metadata"):
		return p, true
	}
	return p + "." + f, true
}

// Message is the one-line text of a result as the Crossplane user sees it:
// the field path inside the XR (or the required object's identity) first.
func (l *Locator) Message(r diag.Result) string {
	f, inXR := l.Field(r)
	var b strings.Builder
	if !inXR {
		b.WriteString(r.Source.Ref.String())
		if f != "" {
			b.WriteString(" ")
		}
	}
	b.WriteString(f)
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(r.Message)
	return b.String()
}

// FromXR converts an XBindCluster or XLegacyBindCluster (its whole object,
// as JSON-decoded maps) into pipeline items: one BindCluster named after
// the Target (the XR, or its claim), plus one item per inline list entry,
// all in the Target's namespace. Problems with the XR's shape are errors
// located in the XR.
func FromXR(xr map[string]any) ([]model.Item, *Locator, diag.Results) {
	meta, _ := xr["metadata"].(map[string]any)
	xrName, _ := meta["name"].(string)
	xrNS, _ := meta["namespace"].(string)
	kind, _ := xr["kind"].(string)
	apiVersion, _ := xr["apiVersion"].(string)
	loc := &Locator{
		XR:     diag.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: xrNS, Name: xrName},
		prefix: map[diag.ObjectRef]string{},
	}
	loc.prefix[loc.XR] = "" // problems with the XR's own shape
	xrSrc := diag.Source{Ref: loc.XR, File: fmt.Sprintf("%s %s", kind, xrName)}
	var rs diag.Results
	var items []model.Item
	if xrName == "" {
		rs.Errorf(xrSrc, "metadata.name", "the %s has no name", kind)
		return nil, loc, rs
	}
	if _, ok := xr["spec"].(map[string]any); !ok && xr["spec"] != nil {
		rs.Errorf(xrSrc, "spec", "spec must be an object")
		return nil, loc, rs
	}
	target, prs := Placement(xr)
	rs = append(rs, prs...)
	if prs.HasErrors() {
		return nil, loc, rs
	}
	loc.Target = target
	name, ns := target.Name, target.Namespace
	spec, _ := xr["spec"].(map[string]any)
	clusterSpec := map[string]any{}
	skip := map[string]bool{NamespaceField: true}
	for _, f := range MachineryFields {
		skip[f] = true
	}
	isList := map[string]bool{}
	for _, l := range Lists {
		isList[l.Field] = true
	}
	for k, v := range spec {
		if !skip[k] && !isList[k] {
			clusterSpec[k] = v
		}
	}
	cluster, rs2 := item(xrSrc, "", v1alpha1.KindBindCluster, name, ns, clusterSpec, nil, kind)
	rs = append(rs, rs2...)
	if cluster != nil {
		items = append(items, *cluster)
		loc.prefix[cluster.Source.Ref] = ""
	}
	for _, l := range Lists {
		raw, present := spec[l.Field]
		if !present || raw == nil {
			continue
		}
		list, ok := raw.([]any)
		if !ok {
			rs.Errorf(xrSrc, "spec."+l.Field, "must be a list of {name, spec}")
			continue
		}
		seen := map[string]int{}
		for i, e := range list {
			field := fmt.Sprintf("spec.%s[%d]", l.Field, i)
			entry, ok := e.(map[string]any)
			if !ok {
				rs.Errorf(xrSrc, field, "must be an object {name, spec}")
				continue
			}
			var bad []string
			for k := range entry {
				if k != "name" && k != "spec" {
					bad = append(bad, k)
				}
			}
			sort.Strings(bad)
			for _, k := range bad {
				rs.Errorf(xrSrc, field+"."+k, "unknown field %q: a list entry has only name and spec", k)
			}
			n, _ := entry["name"].(string)
			if n == "" {
				rs.Errorf(xrSrc, field+".name", "name is required")
				continue
			}
			if j, dup := seen[n]; dup {
				rs.Errorf(xrSrc, field+".name", "duplicate name %q: spec.%s[%d] has it too", n, l.Field, j)
				continue
			}
			seen[n] = i
			if len(bad) > 0 {
				continue
			}
			s, ok := entry["spec"].(map[string]any)
			if !ok && entry["spec"] != nil {
				rs.Errorf(xrSrc, field+".spec", "spec must be an object")
				continue
			}
			src := diag.Source{Ref: diag.ObjectRef{APIVersion: v1alpha1.APIVersion, Kind: l.Kind, Namespace: ns, Name: n}, File: fmt.Sprintf("%s %s %s", kind, xrName, field)}
			loc.prefix[src.Ref] = field
			it, irs := item(src, field, l.Kind, n, ns, s, &name, kind)
			rs = append(rs, irs...)
			if it != nil {
				items = append(items, *it)
			}
		}
	}
	return items, loc, rs
}

// item builds one pipeline item. cluster, when set, is the cluster's name:
// the default (and only allowed value) of spec.clusterRef. xrKind is the
// composite's kind, for messages.
func item(src diag.Source, field, kind, name, ns string, spec map[string]any, cluster *string, xrKind string) (*model.Item, diag.Results) {
	var rs diag.Results
	if spec == nil {
		spec = map[string]any{}
	}
	if cluster != nil && clusterScoped[kind] {
		switch ref, _ := spec["clusterRef"].(string); {
		case ref == "":
			cp := make(map[string]any, len(spec)+1)
			for k, v := range spec {
				cp[k] = v
			}
			cp["clusterRef"] = *cluster
			spec = cp
		case ref != *cluster:
			rs.Errorf(src, "spec.clusterRef", "clusterRef %q names another cluster: an inline %s belongs to this %s (%q); leave clusterRef empty", ref, kind, xrKind, *cluster)
			return nil, rs
		}
	}
	obj := map[string]any{
		"apiVersion": v1alpha1.APIVersion,
		"kind":       kind,
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       spec,
	}
	js, err := json.Marshal(obj)
	if err != nil {
		rs.Errorf(src, "spec", "cannot encode %s: %v", field, err)
		return nil, rs
	}
	if src.Ref.Kind == "" || src.Ref.Kind == xrKind || src.Ref.APIVersion != v1alpha1.APIVersion {
		src.Ref = diag.ObjectRef{APIVersion: v1alpha1.APIVersion, Kind: kind, Namespace: ns, Name: name}
	}
	return &model.Item{Source: src, JSON: js}, rs
}

// RequiredItem converts a required BindZone or DNSRecord into an item. ok
// is false when the object is not in namespace ns (crossplane render, for
// one, ignores the selector's namespace) or not of the group.
func RequiredItem(obj map[string]any, ns string) (model.Item, bool, error) {
	ref := diag.RefOf(obj)
	if ref.Namespace != ns || !model.IsGroup(ref.APIVersion) {
		return model.Item{}, false, nil
	}
	js, err := json.Marshal(obj)
	if err != nil {
		return model.Item{}, false, err
	}
	return model.Item{Source: diag.Source{Ref: ref, File: fmt.Sprintf("required %s %s/%s", ref.Kind, ref.Namespace, ref.Name)}, JSON: js}, true, nil
}
