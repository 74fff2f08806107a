package render

import (
	"fmt"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// Role is which pod a named.conf is for.
type Role int

// Roles: pod 0 is the primary, the others secondaries.
const (
	Primary Role = iota
	Secondary
)

// NOTIFY and transfer rate limits, tuned as measured (DESIGN §6): BIND's
// defaults add 0.5-5 s to every update's propagation.
const (
	notifyRate      = 1000
	serialQueryRate = 1000
)

// confPlan is what named.conf needs besides the model: where each file is.
type confPlan struct {
	// files maps a zone (view + canonical name) to its path in the pod.
	files map[zoneKey]string
	// catalogs maps a view name to the path of its catalog zone file.
	catalogs map[string]string
	// policies maps a view + policy zone to its file path.
	policies map[zoneKey]string
}

type zoneKey struct{ view, zone string }

// confBuilder renders one named.conf and collects located errors.
type confBuilder struct {
	c    *model.Cluster
	role Role
	plan *confPlan
	rs   diag.Results
}

func bare(name string) string { return strings.TrimSuffix(name, ".") }

// namedConf renders the named.conf of one role.
func namedConf(c *model.Cluster, role Role, plan *confPlan) ([]byte, diag.Results) {
	b := &confBuilder{c: c, role: role, plan: plan}
	f := &nc.File{}
	who := "primary (pod 0)"
	if role == Secondary {
		who = "secondaries (pods 1..n)"
	}
	f.Comment(fmt.Sprintf("named.conf for the %s of BindCluster %s/%s, rendered by bind-fn. Do not edit.", who, c.Namespace, c.Name))
	f.Add(nc.S(nc.Kw("include"), nc.Str(layout.RNDCDir+"/"+layout.RNDCKeyFile)))
	f.Add(nc.S(nc.Kw("include"), nc.Str(layout.RunFile(layout.ServersInclude))))
	for _, k := range c.Keys {
		f.Add(nc.S(nc.Kw("include"), nc.Str(keyInclude(c, k))))
	}
	f.Add(nc.B([]nc.Word{nc.Kw("controls")},
		nc.S(nc.Kw("inet"), nc.Kw("127.0.0.1"), nc.Kw("port"), nc.Int(layout.RNDCPort),
			nc.Kw("allow"), nc.L(nc.S(nc.Kw("127.0.0.1"))),
			nc.Kw("keys"), nc.L(nc.S(nc.Str(layout.RNDCKeyName)))),
	))
	f.Add(nc.B([]nc.Word{nc.Kw("statistics-channels")},
		nc.S(nc.Kw("inet"), nc.Kw("127.0.0.1"), nc.Kw("port"), nc.Int(layout.StatisticsPort),
			nc.Kw("allow"), nc.L(nc.S(nc.Kw("127.0.0.1")))),
	))
	f.Add(b.logging())
	for _, a := range c.ACLs {
		f.Add(nc.B([]nc.Word{nc.Kw("acl"), nc.Str(a.Name)}, b.aml(a.Src, "spec.addresses", a.Elements)...))
	}
	for _, p := range c.DNSSECPolicies {
		f.Add(b.dnssecPolicy(p))
	}
	f.Add(b.options())
	if c.HasViews {
		for _, v := range c.Views {
			f.Add(nc.B([]nc.Word{nc.Kw("view"), nc.Str(v.Name)}, b.viewBody(v)...))
		}
	} else {
		f.Add(b.zones(c.Views[0])...)
	}
	out, err := f.Bytes()
	if err != nil {
		b.rs.Errorf(c.Src, "", "cannot render named.conf: %v", err)
	}
	return out, b.rs
}

// keyInclude is where a key's statement is in the pod: its file in the
// cluster's keys Secret, or the include the agent writes for an imported
// Secret.
func keyInclude(c *model.Cluster, k *model.Key) string {
	if k.Import {
		return layout.ImportedKeyInclude(k.SecretName)
	}
	return layout.GeneratedKeyFile(c.Name, k.SecretName)
}

func (b *confBuilder) logging() nc.Stmt {
	body := []nc.Stmt{
		nc.B([]nc.Word{nc.Kw("channel"), nc.Kw("stderr_log")},
			nc.S(nc.Kw("stderr")),
			nc.S(nc.Kw("severity"), nc.Kw("info")),
			nc.S(nc.Kw("print-time"), nc.Kw("yes")),
			nc.S(nc.Kw("print-category"), nc.Kw("yes")),
			nc.S(nc.Kw("print-severity"), nc.Kw("yes")),
		),
		nc.S(nc.Kw("category"), nc.Kw("default"), nc.L(nc.S(nc.Kw("stderr_log")))),
		nc.S(nc.Kw("category"), nc.Kw("lame-servers"), nc.L(nc.S(nc.Kw("null")))),
	}
	if b.c.Spec.QueryLogging {
		body = append(body, nc.S(nc.Kw("category"), nc.Kw("queries"), nc.L(nc.S(nc.Kw("stderr_log")))))
	}
	return nc.B([]nc.Word{nc.Kw("logging")}, body...)
}

// aml renders a user address match list, each bad element a located error.
func (b *confBuilder) aml(src diag.Source, field string, elems []string) []nc.Stmt {
	stmts, errs := nc.ParseAML(elems)
	for i, err := range errs {
		if err != nil {
			b.rs.Errorf(src, fmt.Sprintf("%s[%d]", field, i), "%v", err)
		}
	}
	var out []nc.Stmt
	for i, s := range stmts {
		if i < len(errs) && errs[i] != nil {
			continue
		}
		out = append(out, s)
	}
	return out
}

// servers renders user server entries (forwarders, primaries, also-notify).
func (b *confBuilder) servers(src diag.Source, field string, entries []string) []nc.Stmt {
	return b.keyedServers(src, field, entries, "")
}

// keyedServers renders server entries; key, when set, signs every entry that
// does not name its own.
func (b *confBuilder) keyedServers(src diag.Source, field string, entries []string, key string) []nc.Stmt {
	var out []nc.Stmt
	for i, e := range entries {
		se, err := nc.ParseServerEntry(e)
		if err != nil {
			b.rs.Errorf(src, fmt.Sprintf("%s[%d]", field, i), "%v", err)
			continue
		}
		if se.Key == "" {
			se.Key = key
		}
		out = append(out, se.Stmt())
	}
	return out
}

func yesNo(v bool) nc.Word {
	if v {
		return nc.Kw("yes")
	}
	return nc.Kw("no")
}

func (b *confBuilder) options() nc.Stmt {
	c := b.c
	sp := c.Spec
	o := []nc.Stmt{
		nc.S(nc.Kw("directory"), nc.Str(layout.DataDir)),
		nc.S(nc.Kw("pid-file"), nc.Str(layout.RunFile("named.pid"))),
		nc.S(nc.Kw("session-keyfile"), nc.Str(layout.RunFile("session.key"))),
		nc.S(nc.Kw("lock-file"), nc.Str(layout.RunFile("named.lock"))),
		nc.S(nc.Kw("listen-on"), nc.L(nc.S(nc.Kw("any")))),
	}
	if sp.IPv6 {
		o = append(o, nc.S(nc.Kw("listen-on-v6"), nc.L(nc.S(nc.Kw("any")))))
	} else {
		o = append(o, nc.S(nc.Kw("listen-on-v6"), nc.L(nc.S(nc.Kw("none")))))
	}
	o = append(o,
		nc.S(nc.Kw("version"), nc.Str("not disclosed")),
		nc.S(nc.Kw("querylog"), yesNo(sp.QueryLogging)),
	)
	if len(sp.AllowQuery) > 0 {
		o = append(o, nc.S(nc.Kw("allow-query"), nc.L(b.aml(c.Src, "spec.allowQuery", sp.AllowQuery)...)))
	} else {
		o = append(o, nc.S(nc.Kw("allow-query"), nc.L(nc.S(nc.Kw("any")))))
	}
	if sp.Mode == v1alpha1.ModeResolver {
		o = append(o, nc.S(nc.Kw("recursion"), nc.Kw("yes")))
		rec := sp.AllowRecursion
		if len(rec) == 0 {
			rec = []string{"localnets", "localhost"}
		}
		o = append(o, nc.S(nc.Kw("allow-recursion"), nc.L(b.aml(c.Src, "spec.allowRecursion", rec)...)))
		if len(sp.Forwarders) > 0 {
			o = append(o, nc.S(nc.Kw("forwarders"), nc.L(b.servers(c.Src, "spec.forwarders", sp.Forwarders)...)))
			if sp.ForwardOnly {
				o = append(o, nc.S(nc.Kw("forward"), nc.Kw("only")))
			} else {
				o = append(o, nc.S(nc.Kw("forward"), nc.Kw("first")))
			}
		}
	} else {
		o = append(o,
			nc.S(nc.Kw("recursion"), nc.Kw("no")),
			nc.S(nc.Kw("allow-recursion"), nc.L(nc.S(nc.Kw("none")))),
		)
	}
	switch {
	case sp.DNSSECValidation != "":
		o = append(o, nc.S(nc.Kw("dnssec-validation"), nc.Kw(sp.DNSSECValidation)))
	case sp.Mode == v1alpha1.ModeAuthoritative:
		// Nothing to validate without recursion; left at BIND's default
		// (auto) every view would fetch the root's DNSKEYs (RFC 5011) for
		// trust anchors it never uses.
		o = append(o, nc.S(nc.Kw("dnssec-validation"), nc.Kw("no")))
	}
	// Transfers and updates are opened per zone, by key; never to "any".
	o = append(o,
		nc.S(nc.Kw("allow-transfer"), nc.L(nc.S(nc.Kw("none")))),
		nc.S(nc.Kw("allow-update"), nc.L(nc.S(nc.Kw("none")))),
		nc.S(nc.Kw("notify-rate"), nc.Int(notifyRate)),
		nc.S(nc.Kw("startup-notify-rate"), nc.Int(notifyRate)),
		nc.S(nc.Kw("serial-query-rate"), nc.Int(serialQueryRate)),
		nc.S(nc.Kw("notify-delay"), nc.Int(0)),
	)
	if b.role == Primary {
		o = append(o, nc.S(nc.Kw("notify"), nc.Kw("explicit")))
	} else {
		o = append(o, nc.S(nc.Kw("notify"), nc.Kw("no")))
	}
	if rl := sp.RateLimit; rl != nil {
		var body []nc.Stmt
		if rl.ResponsesPerSecond > 0 {
			body = append(body, nc.S(nc.Kw("responses-per-second"), nc.Int(int64(rl.ResponsesPerSecond))))
		}
		if rl.Window > 0 {
			body = append(body, nc.S(nc.Kw("window"), nc.Int(int64(rl.Window))))
		}
		if rl.Slip != nil {
			body = append(body, nc.S(nc.Kw("slip"), nc.Int(int64(*rl.Slip))))
		}
		// The cluster's own peers (SOA queries after NOTIFY, transfers) share
		// a /24 and would be dropped as a flood: exempt them by the ACL the
		// agent writes beside the server lists.
		exempt := []nc.Stmt{nc.S(nc.Str(layout.PeersACL))}
		exempt = append(exempt, b.aml(c.Src, "spec.rateLimit.exempt", rl.Exempt)...)
		body = append(body, nc.S(nc.Kw("exempt-clients"), nc.L(exempt...)))
		o = append(o, nc.B([]nc.Word{nc.Kw("rate-limit")}, body...))
	}
	if !c.HasViews {
		o = append(o, b.viewOptions(c.Views[0])...)
	}
	o = append(o, b.extraOptions()...)
	return nc.B([]nc.Word{nc.Kw("options")}, o...)
}

// viewOptions are the statements that live in options without views and in
// each view with them.
func (b *confBuilder) viewOptions(v *model.View) []nc.Stmt {
	var o []nc.Stmt
	if b.role == Secondary {
		// NOTIFYs leave the primary from its pod IP, which BIND's implicit
		// allow-notify (the primaries) does not cover: admit them by key.
		o = append(o, nc.S(nc.Kw("allow-notify"), nc.L(nc.S(nc.Kw("key"), nc.Str(v.TransferKey.KeyName)))))
		if v.Catalog != nil {
			o = append(o, nc.B([]nc.Word{nc.Kw("catalog-zones")},
				nc.S(nc.Kw("zone"), nc.Str(bare(v.Catalog.ZoneName)),
					nc.Kw("default-primaries"), nc.L(b.catalogPrimaries(v)...),
					nc.Kw("min-update-interval"), nc.Int(0),
					nc.Kw("in-memory"), nc.Kw("no"),
					nc.Kw("zone-directory"), nc.Str(catzDir(v))),
			))
		}
	}
	if len(v.Policies) > 0 {
		var zs []nc.Stmt
		for _, p := range v.Policies {
			zs = append(zs, nc.S(nc.Kw("zone"), nc.Str(bare(p.ZoneName))))
		}
		head := []nc.Word{nc.Kw("response-policy"), nc.L(zs...)}
		if b.c.Spec.Mode == v1alpha1.ModeAuthoritative {
			// An authoritative server applies RPZ only with recursive-only no.
			head = append(head, nc.Kw("recursive-only"), nc.Kw("no"))
		}
		o = append(o, nc.S(head...))
	}
	return o
}

func catzDir(v *model.View) string { return layout.DataDir + "/" + catzSubdir(v) }

// catzSubdir is where, under the data directory, a view's catalog member
// zones are kept on the secondaries.
func catzSubdir(v *model.View) string {
	if v.Name == "" {
		return "catz"
	}
	return "catz/" + v.Name
}

// Subdirectories of the data directory the rendered config writes into.
const (
	primaryDir   = "primary"
	secondaryDir = "secondary"
)

// catalogPrimaries: the cluster's primary, then the catalog's extra primaries.
// A list reference takes no key in BIND 9.18: the agent writes the key on
// every entry of the list itself.
func (b *confBuilder) catalogPrimaries(v *model.View) []nc.Stmt {
	out := []nc.Stmt{nc.S(nc.Str(layout.PrimaryListName(v.Name)))}
	return append(out, b.servers(v.Catalog.Src, "spec.defaultPrimaries", v.Catalog.DefaultPrimaries)...)
}

func (b *confBuilder) viewBody(v *model.View) []nc.Stmt {
	var match []nc.Stmt
	// The cluster's own transfers and NOTIFYs, and the updates of the view's
	// dynamic zones, find their view by key before any address matches.
	owned := viewKeys(b.c)
	for _, k := range owned[v] {
		match = append(match, nc.S(nc.Kw("key"), nc.Str(k)))
	}
	for _, other := range b.c.Views {
		if other == v {
			continue
		}
		for _, k := range owned[other] {
			match = append(match, nc.S(nc.Kw("!"), nc.Kw("key"), nc.Str(k)))
		}
	}
	mc := v.MatchClients
	if len(mc) == 0 {
		mc = []string{"any"}
	}
	match = append(match, b.aml(v.Src, "spec.matchClients", mc)...)
	body := []nc.Stmt{nc.S(nc.Kw("match-clients"), nc.L(match...))}
	if len(v.MatchDestinations) > 0 {
		body = append(body, nc.S(nc.Kw("match-destinations"), nc.L(b.aml(v.Src, "spec.matchDestinations", v.MatchDestinations)...)))
	}
	if v.Recursion != nil {
		body = append(body, nc.S(nc.Kw("recursion"), yesNo(*v.Recursion)))
		if *v.Recursion && b.c.Spec.Mode == v1alpha1.ModeAuthoritative {
			// Split horizon on an authoritative cluster: the clients this
			// view matches (the office, say) may recurse, with validation;
			// every other view stays authoritative-only.
			body = append(body,
				nc.S(nc.Kw("allow-recursion"), nc.L(nc.S(nc.Kw("any")))),
				nc.S(nc.Kw("dnssec-validation"), nc.Kw("auto")),
			)
		}
	}
	body = append(body, b.viewOptions(v)...)
	return append(body, b.zones(v)...)
}

// viewKeys are the keys that select a view: its transfer key, and the update
// keys of its dynamic zones that no other view's zones use (a key shared by
// two views cannot pick one; such updates match by address like any client).
func viewKeys(c *model.Cluster) map[*model.View][]string {
	users := map[string]map[*model.View]bool{}
	for _, v := range c.Views {
		for _, z := range v.Zones {
			if z.UpdateKey != nil && z.Spec.DynamicUpdate {
				if users[z.UpdateKey.KeyName] == nil {
					users[z.UpdateKey.KeyName] = map[*model.View]bool{}
				}
				users[z.UpdateKey.KeyName][v] = true
			}
		}
	}
	out := map[*model.View][]string{}
	for _, v := range c.Views {
		keys := []string{v.TransferKey.KeyName}
		for k, vs := range users {
			if len(vs) == 1 && vs[v] && k != v.TransferKey.KeyName {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys[1:])
		out[v] = keys
	}
	return out
}

// zones renders every zone statement of a view.
func (b *confBuilder) zones(v *model.View) []nc.Stmt {
	var out []nc.Stmt
	if v.Catalog != nil {
		out = append(out, b.catalogZone(v))
	}
	for _, z := range v.Zones {
		if s, ok := b.zone(v, z); ok {
			out = append(out, s)
		}
	}
	for _, p := range v.Policies {
		out = append(out, nc.B([]nc.Word{nc.Kw("zone"), nc.Str(bare(p.ZoneName))},
			nc.S(nc.Kw("type"), nc.Kw("primary")),
			nc.S(nc.Kw("file"), nc.Str(b.plan.policies[zoneKey{v.Name, p.ZoneName}])),
			nc.S(nc.Kw("allow-query"), nc.L(nc.S(nc.Kw("localhost")))),
			nc.S(nc.Kw("allow-transfer"), nc.L(nc.S(nc.Kw("none")))),
			nc.S(nc.Kw("notify"), nc.Kw("no")),
		))
	}
	return out
}

func (b *confBuilder) catalogZone(v *model.View) nc.Stmt {
	name := []nc.Word{nc.Kw("zone"), nc.Str(bare(v.Catalog.ZoneName))}
	if b.role == Primary {
		return nc.B(name,
			nc.S(nc.Kw("type"), nc.Kw("primary")),
			nc.S(nc.Kw("file"), nc.Str(b.plan.catalogs[v.Name])),
			nc.S(nc.Kw("allow-transfer"), nc.L(nc.S(nc.Kw("key"), nc.Str(v.TransferKey.KeyName)))),
			nc.S(nc.Kw("notify"), nc.Kw("explicit")),
			nc.S(nc.Kw("also-notify"), nc.L(nc.S(nc.Str(layout.SecondariesListName(v.Name))))),
		)
	}
	return nc.B(name,
		nc.S(nc.Kw("type"), nc.Kw("secondary")),
		nc.S(nc.Kw("file"), nc.Str(catzDir(v)+"/"+fileName("catalog", "", v.Catalog.ZoneName))),
		nc.S(nc.Kw("primaries"), nc.L(nc.S(nc.Str(layout.PrimaryListName(v.Name))))),
	)
}

func (b *confBuilder) zone(v *model.View, z *model.Zone) (nc.Stmt, bool) {
	head := []nc.Word{nc.Kw("zone"), nc.Str(bare(z.Name))}
	sp := z.Spec
	var body []nc.Stmt
	switch sp.Type {
	case v1alpha1.ZonePrimary:
		if b.role == Secondary {
			if z.CatalogMember {
				return nc.Stmt{}, false // provisioned by the catalog
			}
			body = append(body,
				nc.S(nc.Kw("type"), nc.Kw("secondary")),
				nc.S(nc.Kw("file"), nc.Str(secondaryFile(v, z))),
				nc.S(nc.Kw("primaries"), nc.L(nc.S(nc.Str(layout.PrimaryListName(v.Name))))),
			)
			break
		}
		body = append(body,
			nc.S(nc.Kw("type"), nc.Kw("primary")),
			nc.S(nc.Kw("file"), nc.Str(b.plan.files[zoneKey{v.Name, z.Name}])),
		)
		xfr := []nc.Stmt{nc.S(nc.Kw("key"), nc.Str(v.TransferKey.KeyName))}
		xfr = append(xfr, b.aml(z.Src, "spec.allowTransfer", sp.AllowTransfer)...)
		body = append(body, nc.S(nc.Kw("allow-transfer"), nc.L(xfr...)))
		notify := []nc.Stmt{nc.S(nc.Str(layout.SecondariesListName(v.Name)))}
		notify = append(notify, b.servers(z.Src, "spec.alsoNotify", sp.AlsoNotify)...)
		body = append(body,
			nc.S(nc.Kw("notify"), nc.Kw("explicit")),
			nc.S(nc.Kw("also-notify"), nc.L(notify...)),
		)
		if sp.DynamicUpdate && z.UpdateKey != nil {
			body = append(body, nc.S(nc.Kw("allow-update"), nc.L(nc.S(nc.Kw("key"), nc.Str(z.UpdateKey.KeyName)))))
		}
		if z.DNSSEC != nil {
			body = append(body, nc.S(nc.Kw("dnssec-policy"), nc.Str(z.DNSSEC.Name)))
			if !sp.DynamicUpdate {
				body = append(body, nc.S(nc.Kw("inline-signing"), nc.Kw("yes")))
			}
			// The directory the agent seeds the zone into: it exists, on the
			// data volume. named never creates a missing key-directory.
			body = append(body, nc.S(nc.Kw("key-directory"), nc.Str(layout.DataDir+"/"+primaryDir)))
			// The signed serial follows the clock: after the primary loses its
			// volume and re-signs, the serial is still above the one the
			// secondaries hold, so they transfer again (dnssec.go).
			body = append(body, nc.S(nc.Kw("serial-update-method"), nc.Kw("unixtime")))
		}
	case v1alpha1.ZoneSecondary, v1alpha1.ZoneStub:
		typ := "secondary"
		if sp.Type == v1alpha1.ZoneStub {
			typ = "stub"
		}
		key := ""
		if z.TransferKey != nil {
			key = z.TransferKey.KeyName
		}
		prim := b.keyedServers(z.Src, "spec.primaries", sp.Primaries, key)
		body = append(body,
			nc.S(nc.Kw("type"), nc.Kw(typ)),
			nc.S(nc.Kw("file"), nc.Str(secondaryFile(v, z))),
			nc.S(nc.Kw("primaries"), nc.L(prim...)),
		)
	case v1alpha1.ZoneForward:
		only := sp.ForwardOnly == nil || *sp.ForwardOnly
		fwd := "first"
		if only {
			fwd = "only"
		}
		body = append(body,
			nc.S(nc.Kw("type"), nc.Kw("forward")),
			nc.S(nc.Kw("forward"), nc.Kw(fwd)),
			nc.S(nc.Kw("forwarders"), nc.L(b.servers(z.Src, "spec.forwarders", sp.Forwarders)...)),
		)
	default:
		b.rs.Errorf(z.Src, "spec.type", "unknown zone type %q: use primary, secondary, forward or stub", sp.Type)
		return nc.Stmt{}, false
	}
	if len(sp.AllowQuery) > 0 && sp.Type != v1alpha1.ZoneForward {
		body = append(body, nc.S(nc.Kw("allow-query"), nc.L(b.aml(z.Src, "spec.allowQuery", sp.AllowQuery)...)))
	}
	return nc.B(head, body...), true
}

// secondaryFile is where named keeps a transferred zone.
func secondaryFile(v *model.View, z *model.Zone) string {
	return layout.DataDir + "/" + secondaryDir + "/" + fileName("db", v.Name, z.Name)
}

// fileName maps a view and zone name to a file name that is also a valid
// ConfigMap key ([-._a-zA-Z0-9]+): anything else is hex-escaped as _xx.
// prefix tells zones (db), catalogs (catalog) and policy zones (rpz) apart.
func fileName(prefix, view, zone string) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(".")
	if view != "" {
		b.WriteString(escapeName(view))
		b.WriteString("_")
	}
	b.WriteString(escapeName(bare(zone)))
	return b.String()
}

func escapeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= '0' && ch <= '9', ch == '.', ch == '-':
			b.WriteByte(ch)
		case ch >= 'A' && ch <= 'Z':
			b.WriteByte(ch + 'a' - 'A')
		default:
			fmt.Fprintf(&b, "_%02x", ch)
		}
	}
	return b.String()
}

func (b *confBuilder) dnssecPolicy(p *model.DNSSECPolicy) nc.Stmt {
	sp := p.Spec
	var keys []nc.Stmt
	ks := sp.Keys
	if len(ks) == 0 {
		ks = []v1alpha1.DNSSECKey{{Role: "csk"}}
	}
	for i, k := range ks {
		alg := k.Algorithm
		if alg == "" {
			alg = "ecdsap256sha256"
		}
		life := k.Lifetime
		if life == "" {
			life = "unlimited"
		}
		if !isDuration(life) {
			b.rs.Errorf(p.Src, fmt.Sprintf("spec.keys[%d].lifetime", i), "cannot use %q as a key lifetime: write an ISO 8601 duration (P1Y, P90D) or unlimited", life)
		}
		if !isKeyword(alg) {
			b.rs.Errorf(p.Src, fmt.Sprintf("spec.keys[%d].algorithm", i), "cannot use %q as a DNSSEC algorithm: use a BIND mnemonic such as ecdsap256sha256 or ed25519", alg)
			continue
		}
		w := []nc.Word{nc.Kw(k.Role), nc.Kw("lifetime"), nc.Kw(strings.ToUpper(life)), nc.Kw("algorithm"), nc.Kw(strings.ToLower(alg))}
		if life == "unlimited" {
			w[2] = nc.Kw("unlimited")
		}
		if k.Bits != nil {
			w = append(w, nc.Int(int64(*k.Bits)))
		}
		keys = append(keys, nc.S(w...))
	}
	body := []nc.Stmt{nc.S(nc.Kw("keys"), nc.L(keys...))}
	durations := []struct{ kw, field, v string }{
		{"dnskey-ttl", "dnskeyTTL", sp.DNSKEYTTL},
		{"max-zone-ttl", "maxZoneTTL", sp.MaxZoneTTL},
		{"signatures-refresh", "signaturesRefresh", sp.SignaturesRefresh},
		{"signatures-validity", "signaturesValidity", sp.SignaturesValidity},
		{"signatures-validity-dnskey", "signaturesValidityDNSKEY", sp.SignaturesValidityDNSKEY},
		{"publish-safety", "publishSafety", sp.PublishSafety},
		{"retire-safety", "retireSafety", sp.RetireSafety},
		{"purge-keys", "purgeKeys", sp.PurgeKeys},
		{"zone-propagation-delay", "zonePropagationDelay", sp.ZonePropagationDelay},
		{"parent-ds-ttl", "parentDSTTL", sp.ParentDSTTL},
		{"parent-propagation-delay", "parentPropagationDelay", sp.ParentPropagationDelay},
	}
	for _, d := range durations {
		if d.v == "" {
			continue
		}
		if !isDuration(d.v) || d.v == "unlimited" {
			b.rs.Errorf(p.Src, "spec."+d.field, "cannot use %q as a duration: write ISO 8601 (PT1H, P14D)", d.v)
			continue
		}
		body = append(body, nc.S(nc.Kw(d.kw), nc.Kw(strings.ToUpper(d.v))))
	}
	if n := sp.NSEC3; n != nil {
		body = append(body, nc.B([]nc.Word{nc.Kw("nsec3param")},
			nc.S(nc.Kw("iterations"), nc.Int(int64(n.Iterations))),
			nc.S(nc.Kw("optout"), yesNo(n.OptOut)),
			nc.S(nc.Kw("salt-length"), nc.Int(int64(n.SaltLength))),
		))
	}
	return nc.B([]nc.Word{nc.Kw("dnssec-policy"), nc.Str(p.Name)}, body...)
}

func isDuration(s string) bool {
	if s == "unlimited" {
		return true
	}
	u := strings.ToUpper(s)
	if len(u) < 2 || u[0] != 'P' {
		return false
	}
	seenT, digits := false, false
	for _, ch := range u[1:] {
		switch {
		case ch >= '0' && ch <= '9':
			digits = true
		case ch == 'T' && !seenT:
			seenT = true
		case strings.ContainsRune("YMWDHS", ch) && digits:
			digits = false
		default:
			return false
		}
	}
	return !digits
}

func isKeyword(s string) bool {
	if s == "" {
		return false
	}
	for _, ch := range s {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-') {
			return false
		}
	}
	return true
}
