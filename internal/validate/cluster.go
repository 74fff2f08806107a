package validate

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// checkClusterSpec: enumerations and values of the BindCluster spec that
// reach named.conf or the pod spec.
func checkClusterSpec(c *model.Cluster) diag.Results {
	var rs diag.Results
	sp := c.Spec
	switch sp.Mode {
	case v1alpha1.ModeAuthoritative, v1alpha1.ModeResolver:
	default:
		rs.Errorf(c.Src, "spec.mode", "cannot use mode %q: use authoritative or resolver", sp.Mode)
	}
	if sp.Replicas < 1 {
		rs.Errorf(c.Src, "spec.replicas", "cannot run %d replicas: use 1 or more", sp.Replicas)
	}
	switch sp.DNSSECValidation {
	case "", "auto", "no":
	case "yes":
		// yes validates with the configured trust anchors only, and bind-fn
		// renders none: BIND 9.18 then validates nothing, BIND 9.20 refuses
		// the config ("requires configured 'trust-anchors'").
		rs.Errorf(c.Src, "spec.dnssecValidation", "cannot use dnssecValidation \"yes\": it validates only against configured trust anchors, which bind-fn does not render, and BIND 9.20 refuses it without them; use auto (the root's built-in key) or no")
	default:
		rs.Errorf(c.Src, "spec.dnssecValidation", "cannot use dnssecValidation %q: use auto, yes or no", sp.DNSSECValidation)
	}
	switch sp.Secrets {
	case "", v1alpha1.SecretsRendered, v1alpha1.SecretsExternal:
	default:
		rs.Errorf(c.Src, "spec.secrets", "cannot use secrets %q: use rendered (bind-fn writes the key Secrets into the package) or external (they are made elsewhere, and the render writes no key material)", sp.Secrets)
	}
	switch sp.ImagePullPolicy {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		rs.Errorf(c.Src, "spec.imagePullPolicy", "cannot use imagePullPolicy %q: use Always, IfNotPresent or Never", sp.ImagePullPolicy)
	}
	for field, img := range map[string]string{"spec.image": sp.Image, "spec.agent.image": sp.Agent.Image} {
		if strings.ContainsFunc(img, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '"' || r == '\\' }) {
			rs.Errorf(c.Src, field, "cannot use %q as an image reference: it holds blanks, quotes or control characters", img)
		}
	}
	if sp.Agent.ResolveIntervalSeconds < 1 {
		rs.Errorf(c.Src, "spec.agent.resolveIntervalSeconds", "cannot re-resolve peers every %d seconds: use 1 or more", sp.Agent.ResolveIntervalSeconds)
	}
	if sp.PriorityClassName != "" {
		if errs := validation.IsDNS1123Subdomain(sp.PriorityClassName); len(errs) > 0 {
			rs.Errorf(c.Src, "spec.priorityClassName", "cannot use %q as a PriorityClass name: %s", sp.PriorityClassName, strings.Join(errs, "; "))
		}
	}
	if sp.Mode == v1alpha1.ModeAuthoritative {
		if len(sp.Forwarders) > 0 {
			rs.Warnf(c.Src, "spec.forwarders", "forwarders are ignored in authoritative mode (recursion is off): set spec.mode: resolver, or remove them")
		}
		var recursive []string // recursive views without a list of their own
		for _, v := range c.Views {
			if v.Recursion != nil && *v.Recursion && len(v.AllowRecursion) == 0 {
				recursive = append(recursive, v.Name)
			}
		}
		switch {
		case len(sp.AllowRecursion) > 0 && len(recursive) == 0 && !anyRecursive(c):
			rs.Warnf(c.Src, "spec.allowRecursion", "allowRecursion is ignored in authoritative mode (recursion is off): set spec.mode: resolver, give a BindView recursion: true, or remove it")
		case len(sp.AllowRecursion) == 0 && len(recursive) > 0:
			// Recursion is never open by default: a recursive view of an
			// authoritative cluster admits spec.allowRecursion, not every
			// client it matches.
			rs.Warnf(c.Src, "spec.allowRecursion", "view %q recurses only for localnets and localhost (BIND's default allow-recursion; in a pod, localnets is the pod's own network), not for every client the view matches: list the clients that may recurse in spec.allowRecursion (an ACL name such as the view's matchClients ACL)", strings.Join(recursive, `", "`))
		}
		if sp.ForwardOnly {
			rs.Warnf(c.Src, "spec.forwardOnly", "forwardOnly is ignored in authoritative mode: set spec.mode: resolver, or remove it")
		}
	}
	if sp.Mode == v1alpha1.ModeResolver && sp.ForwardOnly && len(sp.Forwarders) == 0 {
		rs.Errorf(c.Src, "spec.forwardOnly", "cannot forward only without forwarders: list spec.forwarders or drop forwardOnly")
	}
	if rl := sp.RateLimit; rl != nil {
		if rl.ResponsesPerSecond < 0 || rl.Window < 0 || rl.Slip != nil && (*rl.Slip < 0 || *rl.Slip > 10) {
			rs.Errorf(c.Src, "spec.rateLimit", "cannot use a negative rate limit, window or a slip outside 0-10")
		}
		// BIND's DNS_RRL_MAX_RATE (named-checkconf: "responses-per-second
		// 1001 > 1000", 9.18 and 9.20).
		if rl.ResponsesPerSecond > 1000 {
			rs.Errorf(c.Src, "spec.rateLimit.responsesPerSecond", "cannot limit responses to %d per second: BIND allows at most 1000 (named refuses the config); use 1 to 1000, or remove rateLimit", rl.ResponsesPerSecond)
		}
		if rl.Window > 3600 {
			rs.Errorf(c.Src, "spec.rateLimit.window", "cannot use a rate-limit window of %d seconds: BIND allows at most 3600", rl.Window)
		}
	}
	for i, cidr := range append(append([]string(nil), sp.PodCIDRs...), sp.ServiceCIDRs...) {
		field := fmt.Sprintf("spec.podCIDRs[%d]", i)
		if i >= len(sp.PodCIDRs) {
			field = fmt.Sprintf("spec.serviceCIDRs[%d]", i-len(sp.PodCIDRs))
		}
		if _, err := parseCIDR(cidr); err != nil {
			rs.Errorf(c.Src, field, "cannot use %q as a network: %v", cidr, err)
		}
	}
	viewRecursion(c, &rs)
	return rs
}

// Kubernetes name limits.
const (
	maxLabel = 63  // Service names, pod host names, label values
	maxName  = 253 // ConfigMap and Secret names
	// A StatefulSet's pods carry controller-revision-hash=<name>-<hash of
	// up to 10 characters>, a label value of at most 63: the name may have 52.
	maxStatefulSet = maxLabel - 11
)

// checkGeneratedNames: every object the cluster renders must have a name
// the API server accepts.
func checkGeneratedNames(c *model.Cluster) diag.Results {
	var rs diag.Results
	n := c.Name
	if errs := validation.IsDNS1035Label(n); len(errs) > 0 && len(n) <= maxLabel {
		rs.Errorf(c.Src, "metadata.name", "cannot name the StatefulSet and Services %q: %s", n, strings.Join(errs, "; "))
		return rs
	}
	for _, o := range []struct {
		what, name string
		max        int
	}{
		{"StatefulSet", n, maxStatefulSet},
		{"Service", layout.HeadlessServiceName(n), maxLabel},
		{"Service", layout.PrimaryServiceName(n), maxLabel},
		{"ConfigMap", layout.ZonesConfigMapName(n, 99), maxName},
	} {
		if len(o.name) > o.max {
			rs.Errorf(c.Src, "metadata.name", "cannot name the %s %q: it is %d characters, Kubernetes allows %d (StatefulSet pods need room for the revision hash); shorten the BindCluster name to at most %d characters", o.what, o.name, len(o.name), o.max, maxStatefulSet)
			return rs
		}
	}
	for _, v := range c.Views {
		if v.TransferKey != nil && v.TransferKey.Internal && viewName(v.Name) == nil {
			if err := secretName(v.TransferKey.SecretName); err != nil {
				rs.Errorf(v.Src, "metadata.name", "cannot name the generated transfer key Secret %q: %v; shorten the view or cluster name, or set a catalog transferKeyRef", v.TransferKey.SecretName, err)
			} else if err := keyName(v.TransferKey.KeyName); err != nil {
				// A TSIG key name is a domain name: a label of at most 63.
				rs.Errorf(v.Src, "metadata.name", "cannot name the generated transfer key %q: %v; shorten the view or cluster name, or set a catalog transferKeyRef", v.TransferKey.KeyName, err)
			}
		}
	}
	return rs
}

// keyNames are the TSIG key names known to the cluster (case-insensitive).
func keyNames(c *model.Cluster) map[string]bool {
	m := map[string]bool{}
	for _, k := range c.Keys {
		m[strings.ToLower(k.KeyName)] = true
	}
	for _, v := range c.Views {
		if v.TransferKey != nil {
			m[strings.ToLower(v.TransferKey.KeyName)] = true
		}
	}
	return m
}

// anyRecursive says whether a view of the cluster recurses.
func anyRecursive(c *model.Cluster) bool {
	for _, v := range c.Views {
		if v.Recursion != nil && *v.Recursion {
			return true
		}
	}
	return false
}

// viewRecursion warns of a view's allowRecursion that nothing reads: the
// view does not recurse (recursion: false, or an authoritative cluster's
// view without recursion: true).
func viewRecursion(c *model.Cluster, rs *diag.Results) {
	for _, v := range c.Views {
		if len(v.AllowRecursion) == 0 {
			continue
		}
		recurses := c.Spec.Mode == v1alpha1.ModeResolver
		if v.Recursion != nil {
			recurses = *v.Recursion
		}
		if !recurses {
			rs.Warnf(v.Src, "spec.allowRecursion", "allowRecursion is ignored: view %q does not recurse (set recursion: true, or remove it)", v.Name)
		}
	}
}

// amlField and serverField are the user lists of a cluster.
type listField struct {
	src   diag.Source
	field string
	elems []string
}

func amlFields(c *model.Cluster) []listField {
	sp := c.Spec
	out := []listField{
		{c.Src, "spec.allowQuery", sp.AllowQuery},
		{c.Src, "spec.allowRecursion", sp.AllowRecursion},
	}
	if sp.RateLimit != nil {
		out = append(out, listField{c.Src, "spec.rateLimit.exempt", sp.RateLimit.Exempt})
	}
	for _, a := range c.ACLs {
		out = append(out, listField{a.Src, "spec.addresses", a.Elements})
	}
	for _, v := range c.Views {
		if v.Name == "" {
			continue
		}
		out = append(out, listField{v.Src, "spec.matchClients", v.MatchClients}, listField{v.Src, "spec.matchDestinations", v.MatchDestinations},
			listField{v.Src, "spec.allowRecursion", v.AllowRecursion})
		for _, z := range v.Zones {
			out = append(out, listField{z.Src, "spec.allowTransfer", z.Spec.AllowTransfer}, listField{z.Src, "spec.allowQuery", z.Spec.AllowQuery})
		}
	}
	if !c.HasViews {
		for _, z := range c.Views[0].Zones {
			out = append(out, listField{z.Src, "spec.allowTransfer", z.Spec.AllowTransfer}, listField{z.Src, "spec.allowQuery", z.Spec.AllowQuery})
		}
	}
	return out
}

func serverFields(c *model.Cluster) []listField {
	out := []listField{{c.Src, "spec.forwarders", c.Spec.Forwarders}}
	for _, v := range c.Views {
		if v.Catalog != nil {
			out = append(out, listField{v.Catalog.Src, "spec.defaultPrimaries", v.Catalog.DefaultPrimaries})
		}
		for _, z := range v.Zones {
			out = append(out,
				listField{z.Src, "spec.primaries", z.Spec.Primaries},
				listField{z.Src, "spec.alsoNotify", z.Spec.AlsoNotify},
				listField{z.Src, "spec.forwarders", z.Spec.Forwarders})
		}
	}
	return out
}

// checkKeyRefsInLists: every `key <name>` in an address match list and every
// `... key <name>` of a server entry names a key the cluster defines, and
// every ACL name an ACL. named-checkconf does not catch an undefined key:
// named starts, and the key just never matches.
func checkKeyRefsInLists(c *model.Cluster) diag.Results {
	var rs diag.Results
	keys := keyNames(c)
	acls := map[string]bool{}
	for _, a := range c.ACLs {
		acls[strings.ToLower(a.Name)] = true
	}
	lists := map[string]bool{}
	for _, v := range c.Views {
		lists[layout.PrimaryListName(v.Name)] = true
		lists[layout.SecondariesListName(v.Name)] = true
	}
	undefinedKey := func(src diag.Source, field, name string) {
		rs.Errorf(src, field, "cannot use TSIG key %q: no BindTSIGKey of BindCluster %q has that keyName, so BIND would never match it; define the key (clusterRef %q or empty) or fix the name", name, c.Name, c.Name)
	}
	for _, lf := range amlFields(c) {
		for i, e := range lf.elems {
			el, err := nc.ParseElement(e)
			if err != nil {
				continue // the writer reports it
			}
			f := fmt.Sprintf("%s[%d]", lf.field, i)
			switch {
			case el.Key != "" && !keys[strings.ToLower(strings.TrimSuffix(el.Key, "."))]:
				undefinedKey(lf.src, f, el.Key)
			case el.ACL != "" && !acls[strings.ToLower(el.ACL)]:
				rs.Errorf(lf.src, f, "cannot use ACL %q: no BindACL of BindCluster %q has that name; define it or fix the name", el.ACL, c.Name)
			}
		}
	}
	for _, lf := range serverFields(c) {
		for i, e := range lf.elems {
			se, err := nc.ParseServerEntry(e)
			if err != nil {
				continue
			}
			f := fmt.Sprintf("%s[%d]", lf.field, i)
			switch {
			case se.Key != "" && !keys[strings.ToLower(strings.TrimSuffix(se.Key, "."))]:
				undefinedKey(lf.src, f, se.Key)
			case se.List != "" && strings.HasSuffix(lf.field, "forwarders"):
				rs.Errorf(lf.src, f, "cannot forward to %q: forwarders take IP addresses only, not server list or host names", se.List)
			case se.List != "" && !lists[se.List]:
				rs.Errorf(lf.src, f, "cannot use server list %q: bind-fn defines no such list, and BIND takes addresses or list names here, never host names; write an IP address", se.List)
			}
		}
	}
	return rs
}

// checkACLLoops: an ACL that includes itself, directly or through others, is
// one named-checkconf may pass but named exits on ("acl loop detected").
// Each loop is reported once, on the element of the first ACL (by name)
// that closes it.
func checkACLLoops(clusters []*model.Cluster) diag.Results {
	var rs diag.Results
	type at struct {
		acl *model.ACL
		i   int
	}
	reported := map[at]bool{} // a loop of shared ACLs is in every cluster's scope
	for _, c := range clusters {
		checkACLLoopsIn(c, func(a *model.ACL, i int, format string, args ...any) {
			if !reported[at{a, i}] {
				reported[at{a, i}] = true
				rs.Errorf(a.Src, fmt.Sprintf("spec.addresses[%d]", i), format, args...)
			}
		})
	}
	return rs
}

func checkACLLoopsIn(c *model.Cluster, report func(a *model.ACL, i int, format string, args ...any)) {
	byName := map[string]*model.ACL{}
	for _, a := range c.ACLs {
		byName[strings.ToLower(a.Name)] = a
	}
	refs := func(a *model.ACL) []int {
		var out []int
		for i, e := range a.Elements {
			if el, err := nc.ParseElement(e); err == nil && el.ACL != "" && byName[strings.ToLower(el.ACL)] != nil {
				out = append(out, i)
			}
		}
		return out
	}
	const (
		unseen = iota
		active
		done
	)
	state := map[*model.ACL]int{}
	var path []*model.ACL
	var visit func(a *model.ACL)
	visit = func(a *model.ACL) {
		state[a] = active
		path = append(path, a)
		for _, i := range refs(a) {
			el, _ := nc.ParseElement(a.Elements[i])
			next := byName[strings.ToLower(el.ACL)]
			switch state[next] {
			case unseen:
				visit(next)
			case active:
				var names []string
				start := 0
				for j, p := range path {
					if p == next {
						start = j
					}
				}
				for _, p := range path[start:] {
					names = append(names, fmt.Sprintf("%q", p.Name))
				}
				names = append(names, fmt.Sprintf("%q", next.Name))
				report(a, i, "cannot include ACL %q in ACL %q: it closes a loop (%s) and named exits with \"acl loop detected\"; remove one of the references", el.ACL, a.Name, strings.Join(names, " -> "))
			}
		}
		path = path[:len(path)-1]
		state[a] = done
	}
	for _, a := range c.ACLs { // sorted by name
		if state[a] == unseen {
			visit(a)
		}
	}
}

// checkViewKeys: a key that selects a view belongs to one view (DESIGN
// §11). An UPDATE or query signed with a key lands in the first view whose
// match-clients admits it: an update key used by dynamic zones of two views,
// or one that is another view's transfer key or is named in another view's
// matchClients, sends one view's updates, and the records they add, to the
// other view, where its clients are served them.
func checkViewKeys(c *model.Cluster) diag.Results {
	var rs diag.Results
	if !c.HasViews {
		return rs
	}
	owner := map[string]*model.View{} // key (lower case) -> the view it selects
	for _, v := range c.Views {
		owner[strings.ToLower(v.TransferKey.KeyName)] = v
	}
	for _, v := range c.Views {
		for _, k := range matchedKeys(c, v.MatchClients) {
			if owner[k] == nil {
				owner[k] = v
			}
		}
	}
	byKey := map[string]*model.Zone{}
	for _, v := range c.Views {
		for _, z := range v.Zones {
			if !z.Spec.DynamicUpdate || z.UpdateKey == nil {
				continue
			}
			k := strings.ToLower(z.UpdateKey.KeyName)
			if o := owner[k]; o != nil && o != v {
				rs.Errorf(z.Src, "spec.updateKeyRef", "cannot use key %q to update zone %q of view %q: the key selects view %q (its transfer key, or its matchClients directly or through a BindACL), so the updates, and the records they add, would land in view %q; give the zone a key of its own view", z.UpdateKey.KeyName, strings.TrimSuffix(z.Name, "."), v.Name, o.Name, o.Name)
				continue
			}
			if first := byKey[k]; first != nil && first.View != v {
				rs.Errorf(z.Src, "spec.updateKeyRef", "cannot use key %q to update zones of two views (%q by %s, and %q): updates signed with it land in whichever view matches first, so one view's records would be served to the other view's clients; give each view's dynamic zones their own key", z.UpdateKey.KeyName, first.View.Name, first.Src.Ref, v.Name)
				continue
			}
			byKey[k] = z
		}
	}
	return rs
}

// matchedKeys are the keys (lower case, no trailing dot) an address match
// list admits: named directly, or through BindACLs (followed by name,
// case-insensitively, as BIND does, each once so a loop ends). A key under a
// negation (`!key k`, or `!acl` holding it) selects nothing. BIND reads a key
// in an ACL exactly as one written in place, so both count the same.
func matchedKeys(c *model.Cluster, elems []string) []string {
	byName := map[string]*model.ACL{}
	for _, a := range c.ACLs {
		byName[strings.ToLower(a.Name)] = a
	}
	var out []string
	seen := map[*model.ACL]bool{}
	var walk func([]string)
	walk = func(elems []string) {
		for _, e := range elems {
			el, err := nc.ParseElement(e)
			if err != nil || el.Negated {
				continue
			}
			switch {
			case el.Key != "":
				out = append(out, strings.ToLower(strings.TrimSuffix(el.Key, ".")))
			case el.ACL != "":
				if a := byName[strings.ToLower(el.ACL)]; a != nil && !seen[a] {
					seen[a] = true
					walk(a.Elements)
				}
			}
		}
	}
	walk(elems)
	return out
}
