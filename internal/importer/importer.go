// Package importer turns an existing BIND server's configuration — its
// named.conf (includes expanded by internal/namedconf) and zone files (read
// by miekg/dns) — into bind.unkin.net objects: a BindCluster, BindViews,
// BindACLs, BindTSIGKeys (importExisting, their material in Secrets kept
// apart), BindZones of every type with their records, BindPolicies from
// response-policy zones, BindDNSSECPolicies and the catalog zone.
//
// It works in two phases: readConfig (config.go) reads the statements into
// a typed configuration (what each statement is; each zone's name, class,
// type and options), then Import maps that configuration to objects and
// losses, a file per kind (options.go, zones.go with one function per zone
// type, special.go, keys.go, notify.go, recursion.go, hints.go).
//
// Nothing is dropped silently: every statement it cannot carry is a Loss
// with its file:line, and Check renders the result and compares every zone
// with the original, RRset by RRset.
package importer

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// Options of an import.
type Options struct {
	// Cluster and Namespace of the objects (default "bind" in "dns").
	Cluster, Namespace string
	// Replicas of the BindCluster (default 2: a primary and a secondary).
	Replicas int32
	// ZoneDir is where relative zone file names are found (named's
	// `directory`, unless set).
	ZoneDir string
	// Read reads a file (os.ReadFile).
	Read func(string) ([]byte, error)
	// Exists says whether a file exists (for journals next to zone files).
	Exists func(string) bool
	// ReadZone reads zone files as BIND does (NamedZoneReader); without
	// it miekg/dns reads them, and what it may read otherwise than BIND
	// is a loss.
	ReadZone ZoneReader
	// SignedSerial reads a signed zone's served serial from its .signed
	// version (NamedSignedSerial).
	SignedSerial SignedSerial
	// Glob lists files (filepath.Glob): a signed zone's DNSSEC keys in
	// its key-directory.
	Glob func(pattern string) ([]string, error)
}

// Loss is a statement the import cannot carry, or carries differently.
type Loss struct {
	Where string `json:"where"` // file:line
	What  string `json:"what"`  // the statement, as named.conf would write it
	Why   string `json:"why"`
}

func (l Loss) String() string { return fmt.Sprintf("%s: %s: %s", l.Where, l.What, l.Why) }

// Result is an import.
type Result struct {
	// Objects are the package's objects, by file name.
	Objects map[string][]any
	// Secrets are the key Secrets (material): a manifest kept apart from
	// the package.
	Secrets []*corev1.Secret
	// Losses are statements not carried: the import is lossless when
	// there are none.
	Losses []Loss
	// Replaced are statements bind-fn sets itself (paths, logging,
	// controls): not losses, listed for the record.
	Replaced []Loss
	// Zones are the zones read from files, for Check.
	Zones []Zone
	// ExtraWhere is where each BindCluster extraOptions entry came from.
	ExtraWhere []string
	// ZoneWhere is where each BindZone came from (its zone statement), by
	// object name.
	ZoneWhere map[string]string
	// State is the imported zones' state after Check: the zones
	// ConfigMaps of a render, whose zone files hold each zone's served
	// serial and content hash. Written into the package as its previous
	// output, it makes the served serial the floor the render counts up
	// from (handover.go).
	State []render.Object
	// served are the served serials Check moved out of the BindZones'
	// spec.soa.serial into State, by BindZone object name.
	served map[string]uint32
}

type importer struct {
	opt      Options
	res      *Result
	cluster  *v1alpha1.BindCluster
	keys     map[string]*v1alpha1.BindTSIGKey // by key name
	keyObj   map[string]string                // key name -> object name
	acls     map[string]bool
	lists    map[string][]string // primaries/masters lists by name
	policies map[string]string   // dnssec-policy name -> object name
	names    map[string]bool     // object names used, kind/name
	zoneDir  string
	views    int
	// rpz are response-policy zones per view ("" without views), in order.
	rpz map[string][]string
	// catalogs are the member zones of each view's catalog.
	catalogs map[string]map[string]bool
	// zoneObj are the BindZones by view/zone.
	zoneObj map[string]*v1alpha1.BindZone
	// extraWhere is where each extraOptions entry came from.
	extraWhere []namedconf.Located
	// bindfn: the configuration is a bind-fn render (see own.go); own are
	// bind-fn's own keys, viewKey each view's transfer key.
	bindfn  bool
	own     map[string]bool
	viewKey map[string]string
	// rpzFeed are the secondary response-policy zones of each view, by
	// name (checkFeedOrder).
	rpzFeed map[string]map[string]namedconf.Located
	// hints are the root hint zones, judged after resolveRecursion.
	hints []hint
	// optRec and viewRec are the recursion settings of options and of
	// each view (resolveRecursion).
	optRec  *recursionSettings
	viewRec map[string]*recursionSettings
	// optNotify and viewNotify are the notify statements of options and
	// of each view.
	optNotify  namedconf.Located
	viewNotify map[string]namedconf.Located
	// alsoNotify are the also-notify lists of options ("") and views.
	alsoNotify map[string][]string
	// keyDir is options' key-directory; dnssecSecret the Secret of the
	// signed zones' keys (keys.go).
	keyDir       string
	dnssecSecret *corev1.Secret
}

// Import imports a parsed named.conf.
func Import(conf []namedconf.Located, opt Options) (*Result, error) {
	if opt.Cluster == "" {
		opt.Cluster = "bind"
	}
	if opt.Namespace == "" {
		opt.Namespace = "dns"
	}
	if opt.Replicas == 0 {
		opt.Replicas = 2
	}
	im := &importer{opt: opt, res: &Result{Objects: map[string][]any{}, ZoneWhere: map[string]string{}}, keys: map[string]*v1alpha1.BindTSIGKey{}, keyObj: map[string]string{},
		acls: map[string]bool{}, lists: map[string][]string{}, policies: map[string]string{}, names: map[string]bool{}, rpz: map[string][]string{},
		catalogs: map[string]map[string]bool{}, rpzFeed: map[string]map[string]namedconf.Located{}, zoneObj: map[string]*v1alpha1.BindZone{}}
	im.cluster = &v1alpha1.BindCluster{TypeMeta: tm(v1alpha1.KindBindCluster), ObjectMeta: im.meta(opt.Cluster), Spec: v1alpha1.BindClusterSpec{Replicas: opt.Replicas}}
	im.zoneDir = opt.ZoneDir
	im.bindfn = isBindFnRender(conf)
	im.own, im.viewKey = map[string]bool{}, map[string]string{}
	im.optRec, im.viewRec = &recursionSettings{}, map[string]*recursionSettings{}
	im.viewNotify = map[string]namedconf.Located{}
	im.alsoNotify = map[string][]string{}

	c := readConfig(conf)
	// What others refer to first: keys, ACLs, server lists, policies.
	for _, s := range c.keys {
		im.key(s)
	}
	for _, s := range c.acls {
		im.acl(s)
	}
	for _, s := range c.lists {
		im.list(s)
	}
	for _, s := range c.policies {
		im.dnssecPolicy(s)
	}
	for _, s := range c.replaced {
		im.replaced(s, "bind-fn renders its own (logging to stderr; rndc and statistics on localhost)")
	}
	for _, s := range c.unknown {
		im.lose(s, "top-level statement bind-fn has no field for")
	}
	recursion := true // BIND's default
	if c.options != nil {
		recursion = im.options(*c.options)
	}
	im.views = len(c.views)
	if len(c.views) > 0 {
		for _, z := range c.zones {
			im.lose(z.stmt, "a zone outside every view, in a configuration with views (BIND refuses this)")
		}
	}
	for i, v := range c.views {
		im.view(v, i)
	}
	for _, z := range c.zones {
		im.zone(z, nil)
	}
	im.finish()
	// Dynamic and signed zones live on the primary's data volume: without
	// storage their updates and keys are lost when pod 0 restarts.
	for _, z := range im.zoneObj {
		if z.Spec.DynamicUpdate || z.Spec.DNSSECPolicyRef != "" {
			im.cluster.Spec.Storage = &v1alpha1.StorageSpec{Size: "1Gi"}
			break
		}
	}
	for _, w := range im.extraWhere {
		im.res.ExtraWhere = append(im.res.ExtraWhere, w.Where())
	}
	// Recursion (BIND's default) makes a resolver; with views each view
	// says (a view without its own recursion statement inherits options').
	im.resolveRecursion(recursion, c.views)
	im.checkFeedOrder()
	im.judgeHints(func(view string) bool {
		if view == "" {
			return im.cluster.Spec.Mode == v1alpha1.ModeResolver
		}
		for _, o := range im.res.Objects["views.yaml"] {
			if v := o.(*v1alpha1.BindView); v.Spec.ViewName == view || v.Spec.ViewName == "" && v.Name == view {
				return v.Spec.Recursion != nil && *v.Spec.Recursion || v.Spec.Recursion == nil && im.cluster.Spec.Mode == v1alpha1.ModeResolver
			}
		}
		return true
	})

	im.add("cluster.yaml", im.cluster)
	var keyNames []string
	for n := range im.keys {
		keyNames = append(keyNames, n)
	}
	sort.Strings(keyNames)
	for _, n := range keyNames {
		im.add("keys.yaml", im.keys[n])
	}
	sortLosses(im.res.Losses)
	sortLosses(im.res.Replaced)
	return im.res, nil
}

// sortLosses orders by file and line, then text: the same input gives the
// same report.
func sortLosses(ls []Loss) {
	sort.Slice(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		if a.Where != b.Where {
			return lessWhere(a.Where, b.Where)
		}
		if a.What != b.What {
			return a.What < b.What
		}
		return a.Why < b.Why
	})
}

var whereRE = regexp.MustCompile(`^(.*):(\d+)$`)

func lessWhere(a, b string) bool {
	ma, mb := whereRE.FindStringSubmatch(a), whereRE.FindStringSubmatch(b)
	if ma == nil || mb == nil || ma[1] != mb[1] {
		return a < b
	}
	if len(ma[2]) != len(mb[2]) {
		return len(ma[2]) < len(mb[2])
	}
	return ma[2] < mb[2]
}

func tm(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: kind}
}

func (im *importer) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: im.opt.Namespace}
}

func (im *importer) add(file string, obj any) {
	im.res.Objects[file] = append(im.res.Objects[file], obj)
}

// objName makes a Kubernetes object name (DNS-1123 subdomain) from a BIND
// name, unique per kind.
func (im *importer) objName(kind, name string) string {
	n := strings.ToLower(strings.TrimSuffix(name, "."))
	n = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '-'
	}, n)
	n = strings.Trim(n, "-.")
	if n == "" {
		n = "root"
	}
	if len(n) > 200 {
		n = n[:200]
	}
	base, i := n, 2
	for im.names[kind+"/"+n] {
		n = fmt.Sprintf("%s-%d", base, i)
		i++
	}
	im.names[kind+"/"+n] = true
	return n
}

func format(s namedconf.Located) string {
	b, err := namedconf.Format(oneLine(s.Plain()))
	if err != nil {
		return s.Name() + " ..."
	}
	return strings.TrimSpace(string(b))
}

// oneLine turns a block into a statement with a list word, for messages.
func oneLine(s namedconf.Stmt) namedconf.Stmt {
	if !s.Block {
		return s
	}
	body := make([]namedconf.Stmt, len(s.Body))
	for i, b := range s.Body {
		body[i] = oneLine(b)
	}
	return namedconf.Stmt{Words: append(append([]namedconf.Word(nil), s.Words...), namedconf.L(body...))}
}

func (im *importer) lose(s namedconf.Located, why string) {
	im.res.Losses = append(im.res.Losses, Loss{Where: s.Where(), What: clip(format(s)), Why: why})
}

func (im *importer) replaced(s namedconf.Located, why string) {
	im.res.Replaced = append(im.res.Replaced, Loss{Where: s.Where(), What: clip(format(s)), Why: why})
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:157] + "..."
	}
	return s
}

// elements are a list statement's elements as bind-fn's address match
// list strings ("10.0.0.0/8", "!key \"k\"", "office").
func elements(body []namedconf.Located) ([]string, bool) {
	var out []string
	for _, e := range body {
		if e.Block {
			return nil, false // a nested list: { a; b; }
		}
		var parts []string
		for _, w := range e.Words {
			if w.Kind == namedconf.List {
				return nil, false
			}
			parts = append(parts, w.Text)
		}
		s := strings.Join(parts, " ")
		s = strings.Replace(s, "! ", "!", 1)
		out = append(out, s)
	}
	return out, true
}

func (im *importer) key(s namedconf.Located) {
	name := s.Arg(1)
	if im.ownKey(s) {
		im.own[name] = true
		im.replaced(s, "bind-fn's own key (rndc, intra-cluster transfers): the next render makes it")
		return
	}
	k := &v1alpha1.BindTSIGKey{TypeMeta: tm(v1alpha1.KindBindTSIGKey), ObjectMeta: im.meta(im.objName("key", name))}
	k.Spec.ClusterRef = im.opt.Cluster
	k.Spec.ImportExisting = true
	if k.Name != name {
		k.Spec.KeyName = name
	}
	var secret string
	for _, b := range s.Body {
		switch b.Name() {
		case "algorithm":
			k.Spec.Algorithm = strings.ToLower(b.Arg(1))
		case "secret":
			secret = b.Arg(1)
		default:
			im.lose(b, "key option bind-fn has no field for")
		}
	}
	k.Spec.SecretName = k.Name + "-tsig"
	im.keys[name] = k
	im.keyObj[name] = k.Name
	data := map[string]string{"secret": secret, "keyName": name}
	if k.Spec.Algorithm != "" {
		data["algorithm"] = k.Spec.Algorithm
	}
	im.res.Secrets = append(im.res.Secrets, &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: k.Spec.SecretName, Namespace: im.opt.Namespace},
		Type:       corev1.SecretTypeOpaque,
		StringData: data,
	})
}

func (im *importer) acl(s namedconf.Located) {
	name := s.Arg(1)
	if im.ownList(name) {
		im.replaced(s, "the agent's peer ACL")
		return
	}
	els, ok := elements(s.Body)
	if !ok {
		im.lose(s, "an ACL with a nested list: bind-fn's BindACL.addresses are flat; split it into named ACLs")
		return
	}
	a := &v1alpha1.BindACL{TypeMeta: tm(v1alpha1.KindBindACL), ObjectMeta: im.meta(im.objName("acl", name))}
	a.Spec.ClusterRef = im.opt.Cluster
	if a.Name != name {
		a.Spec.ACLName = name
	}
	a.Spec.Addresses = els
	im.acls[name] = true
	im.add("acls.yaml", a)
}

// list records a primaries/masters list; zones that name it get its entries.
func (im *importer) list(s namedconf.Located) {
	els, ok := elements(s.Body)
	if !ok || len(s.Words) != 2 {
		im.lose(s, "a server list bind-fn cannot read")
		return
	}
	im.lists[s.Arg(1)] = els
	im.replaced(s, "server lists are expanded into the zones that name them")
}

// expand replaces list names in a primaries list with their entries.
func (im *importer) expand(els []string) []string {
	var out []string
	for _, e := range els {
		if l, ok := im.lists[strings.Trim(e, `"`)]; ok {
			out = append(out, im.expand(l)...)
			continue
		}
		out = append(out, e)
	}
	return out
}
