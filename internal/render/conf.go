package render

import (
	"fmt"
	"sort"
	"strconv"
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

// NOTIFY and transfer rate limits, tuned as measured (docs/design.md#replication): BIND's
// defaults add 0.5-5 s to every update's propagation.
const (
	notifyRate      = 1000
	serialQueryRate = 1000
)

// Zone transfer concurrency (docs/kubelet-sync.md, "Secondaries of many
// zones"): BIND's defaults (transfers-in 10, transfers-per-ns 2,
// transfers-out 10) let a secondary take 2 zones at a time from its one
// primary, about 16 small zones a second: over an hour for 100,000 zones.
// A secondary takes up to transfersPerNS at once from the primary; the
// primary serves transfersOut at once (two secondaries at full speed).
// tcpClients lifts BIND's 150: with the default, a primary of 2,000 zones
// (BIND 9.20, TestManyZones) logged "Accepting TCP connection failed:
// quota reached" while two fresh secondaries transferred, some transfers
// timed out, BIND held the primary unreachable for minutes, and the
// secondaries took 3 and 13 minutes to be Ready (27 s with 1000).
const (
	transfersIn    = 100
	transfersPerNS = 50
	transfersOut   = 100
	tcpClients     = 1000
)

// confPlan is what named.conf needs besides the model: where each file is.
type confPlan struct {
	// files maps a zone (view + canonical name) to its path in the pod.
	files map[zoneKey]string
	// catalogs maps a view name to the path of its catalog zone file.
	catalogs map[string]string
	// policies maps a view + policy zone to its file path.
	policies map[zoneKey]string
	// shards is how many zones ConfigMaps there are: each holds the zone
	// statements of its zones (layout.ZonesConfFile), which named.conf
	// includes.
	shards int
}

type zoneKey struct{ view, zone string }

// confBuilder renders one named.conf and collects located errors.
type confBuilder struct {
	c    *model.Cluster
	role Role
	plan *confPlan
	rs   diag.Results
}

// bare is a canonical zone name as named.conf and the agent write it: without
// the trailing dot, except the root zone, which is "." (zone "" is no zone).
func bare(name string) string {
	if name == "." {
		return name
	}
	return strings.TrimSuffix(name, ".")
}

// namedConf renders the named.conf of one role.
func namedConf(c *model.Cluster, role Role, plan *confPlan) ([]byte, diag.Results) {
	b := &confBuilder{c: c, role: role, plan: plan}
	f := &nc.File{}
	who := "primary (pod 0)"
	if role == Secondary {
		who = "secondaries (pods 1..n)"
	}
	f.Comment(fmt.Sprintf("named.conf for the %s of BindCluster %s/%s, rendered by bind-fn. Do not edit.", who, c.Namespace, c.Name))
	f.Add(nc.S(nc.Kw("include"), nc.Str(layout.RNDCKeyInclude())))
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
	f.Add(b.tlsBlocks()...)
	for _, a := range c.ACLs {
		f.Add(nc.B([]nc.Word{nc.Kw("acl"), nc.Str(a.Name)}, a.List.Stmts()...))
	}
	for _, p := range c.DNSSECPolicies {
		f.Add(b.dnssecPolicy(p))
	}
	f.Add(b.options())
	f.Add(b.peerServers()...)
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

// servers renders server entries (forwarders, primaries, also-notify).
func servers(list model.Servers) []nc.Stmt { return keyedServers(list, "") }

// keyedServers renders server entries; key, when set, signs every entry that
// does not name its own.
func keyedServers(list model.Servers, key string) []nc.Stmt {
	out := make([]nc.Stmt, 0, len(list))
	for _, se := range list {
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
		nc.S(nc.Kw("listen-on"), nc.L(nc.S(nc.Kw("any")))),
	}
	if sp.IPv6 {
		o = append(o, nc.S(nc.Kw("listen-on-v6"), nc.L(nc.S(nc.Kw("any")))))
	} else {
		o = append(o, nc.S(nc.Kw("listen-on-v6"), nc.L(nc.S(nc.Kw("none")))))
	}
	o = append(o, b.tlsListeners()...)
	o = append(o,
		nc.S(nc.Kw("version"), nc.Str("not disclosed")),
		nc.S(nc.Kw("querylog"), yesNo(sp.QueryLogging)),
	)
	if sp.Replication != nil && sp.Replication.Hidden {
		o = append(o, nc.S(nc.Kw("allow-query"), nc.L(b.hiddenQuery()...)))
	} else if len(sp.AllowQuery) > 0 {
		// The agent queries its own named signed with the view's transfer
		// key (readiness, serials): that key always gets through, never
		// loopback (any process of the pod could use it).
		var aq []nc.Stmt
		if !c.AllowQuery.AdmitsAll() {
			aq = b.transferKeys()
		}
		aq = append(aq, c.AllowQuery.Stmts()...)
		o = append(o, nc.S(nc.Kw("allow-query"), nc.L(aq...)))
	} else {
		o = append(o, nc.S(nc.Kw("allow-query"), nc.L(nc.S(nc.Kw("any")))))
	}
	if sp.Mode == v1alpha1.ModeResolver {
		o = append(o, nc.S(nc.Kw("recursion"), nc.Kw("yes")))
		o = append(o, nc.S(nc.Kw("allow-recursion"), nc.L(c.AllowRecursion.Stmts()...)))
		if len(sp.Forwarders) > 0 {
			o = append(o, nc.S(nc.Kw("forwarders"), nc.L(servers(c.Forwarders)...)))
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
	if !b.relay() || b.catalogName(c.Views[0]) == "" {
		o = append(o, nc.S(nc.Kw("allow-transfer"), nc.L(nc.S(nc.Kw("none")))))
	}
	o = append(o,
		nc.S(nc.Kw("allow-update"), nc.L(nc.S(nc.Kw("none")))),
		nc.S(nc.Kw("notify-rate"), nc.Int(notifyRate)),
		nc.S(nc.Kw("startup-notify-rate"), nc.Int(notifyRate)),
		nc.S(nc.Kw("serial-query-rate"), nc.Int(serialQueryRate)),
		nc.S(nc.Kw("notify-delay"), nc.Int(0)),
		nc.S(nc.Kw("transfers-in"), nc.Int(transfersIn)),
		nc.S(nc.Kw("transfers-per-ns"), nc.Int(transfersPerNS)),
		nc.S(nc.Kw("transfers-out"), nc.Int(transfersOut)),
		nc.S(nc.Kw("tcp-clients"), nc.Int(tcpClients)),
		// The agent adds, changes and removes one zone with rndc addzone,
		// modzone and delzone instead of a reconfig of every zone; named
		// keeps those in its NZD under the directory, which the agent
		// empties before every start and reconfig (internal/agent/newzones.go).
		nc.S(nc.Kw("allow-new-zones"), nc.Kw("yes")),
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
		exempt = append(exempt, c.RateLimitExempt.Stmts()...)
		body = append(body, nc.S(nc.Kw("exempt-clients"), nc.L(exempt...)))
		o = append(o, nc.B([]nc.Word{nc.Kw("rate-limit")}, body...))
	}
	if b.relay() {
		o = append(o, b.relayOptions(c.Views[0])...)
	}
	if !c.HasViews {
		o = append(o, b.viewOptions(c.Views[0])...)
	}
	if n := c.Resources.MaxCacheSize; n > 0 {
		// Each recursive view's cache, bounded by the container's memory
		// limit (model.CacheSize): BIND's default is 90% of the memory it
		// sees, which in a container is the node's. extraOptions may set
		// it instead (model checks it against the limit).
		o = append(o, nc.S(nc.Kw("max-cache-size"), nc.Kw(strconv.FormatInt(n/(1<<20), 10)+"m")))
	}
	o = append(o, b.extraOptions()...)
	return nc.B([]nc.Word{nc.Kw("options")}, o...)
}

// viewOptions are the statements that live in options without views and in
// each view with them.
func (b *confBuilder) viewOptions(v *model.View) []nc.Stmt {
	var o []nc.Stmt
	if b.relay() {
		// NOTIFYs from the primary cluster leave its pod 0 from a pod
		// address this cluster cannot know: admitted by the shared key
		// (and from the resolved peers: the primary cluster's addresses,
		// the NOTIFY's source when it runs behind a NAT gateway).
		o = append(o, nc.S(nc.Kw("allow-notify"), nc.L(nc.S(nc.Kw("key"), nc.Str(b.c.Upstream.Key.KeyName)), nc.S(nc.Str(layout.PeersACL)))))
		if cat := b.catalogName(v); cat != "" {
			o = append(o, nc.B([]nc.Word{nc.Kw("catalog-zones")},
				nc.S(nc.Kw("zone"), nc.Str(bare(cat)),
					nc.Kw("default-primaries"), nc.L(nc.S(nc.Str(layout.UpstreamListName))),
					nc.Kw("min-update-interval"), nc.Int(0),
					nc.Kw("in-memory"), nc.Kw("no"),
					nc.Kw("zone-directory"), nc.Str(layout.DataPath(catzSubdir(v)))),
			))
		}
	}
	if b.role == Secondary {
		// NOTIFYs leave the primary from its pod IP, which BIND's implicit
		// allow-notify (the primaries) does not cover: admit them by key,
		// and from the cluster's own resolved peers (layout.PeersACL, which
		// holds the primary pod's own address: layout.PrimaryPodList), as
		// BIND admits its primaries' addresses unsigned: BIND 9.20 retries a
		// NOTIFY whose UDP attempt was lost over TCP, unsigned
		// (docs/bind-releases.md). A NOTIFY only starts a TSIG-signed
		// refresh from the primaries.
		o = append(o, nc.S(nc.Kw("allow-notify"), nc.L(nc.S(nc.Kw("key"), nc.Str(v.TransferKey.KeyName)), nc.S(nc.Str(layout.PeersACL)))))
		if cat := b.catalogName(v); cat != "" {
			o = append(o, nc.B([]nc.Word{nc.Kw("catalog-zones")},
				nc.S(nc.Kw("zone"), nc.Str(bare(cat)),
					nc.Kw("default-primaries"), nc.L(b.catalogPrimaries(v)...),
					nc.Kw("min-update-interval"), nc.Int(0),
					nc.Kw("in-memory"), nc.Kw("no"),
					nc.Kw("zone-directory"), nc.Str(layout.DataPath(catzSubdir(v)))),
			))
		}
	}
	var zs []nc.Stmt
	for _, p := range v.Policies {
		zs = append(zs, nc.S(nc.Kw("zone"), nc.Str(bare(p.ZoneName))))
	}
	// Secondary zones that are feeds come after the policies bind-fn
	// writes, in zone order (model sorts the view's zones).
	for _, z := range v.Zones {
		if z.Spec.ResponsePolicy && z.Spec.Type == v1alpha1.ZoneSecondary {
			zs = append(zs, nc.S(nc.Kw("zone"), nc.Str(bare(z.Name))))
		}
	}
	if len(zs) > 0 {
		head := []nc.Word{nc.Kw("response-policy"), nc.L(zs...)}
		if b.c.Spec.Mode == v1alpha1.ModeAuthoritative {
			// An authoritative server applies RPZ only with recursive-only no.
			head = append(head, nc.Kw("recursive-only"), nc.Kw("no"))
		}
		o = append(o, nc.S(head...))
	}
	return o
}

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
	if v.Catalog == nil { // a secondary cluster's: the relay serves every member
		return out
	}
	return append(out, servers(v.Catalog.DefaultPrimariesList)...)
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
	match = append(match, v.MatchClientsList.Stmts()...)
	body := []nc.Stmt{nc.S(nc.Kw("match-clients"), nc.L(match...))}
	if len(v.MatchDestinations) > 0 {
		body = append(body, nc.S(nc.Kw("match-destinations"), nc.L(v.MatchDestinationsList.Stmts()...)))
	}
	if v.Recursion != nil {
		body = append(body, nc.S(nc.Kw("recursion"), yesNo(*v.Recursion)))
		if *v.Recursion && b.c.Spec.Mode == v1alpha1.ModeAuthoritative {
			// Split horizon on an authoritative cluster: this view recurses,
			// with validation, for the clients of its allowRecursion, else
			// the cluster's spec.allowRecursion (BIND's default localnets
			// and localhost when unset), never for every client the view
			// matches; the options say allow-recursion none, so the view
			// must say who may. Every other view stays authoritative-only.
			ar := b.c.AllowRecursion
			if v.AllowRecursionList != nil {
				ar = v.AllowRecursionList
			}
			body = append(body,
				nc.S(nc.Kw("allow-recursion"), nc.L(ar.Stmts()...)),
				nc.S(nc.Kw("dnssec-validation"), nc.Kw("auto")),
			)
		}
	}
	if v.AllowRecursionList != nil && b.c.Spec.Mode == v1alpha1.ModeResolver && (v.Recursion == nil || *v.Recursion) {
		// A resolver's view with clients of its own: BIND reads the view's
		// allow-recursion over the options' (the cluster's).
		body = append(body, nc.S(nc.Kw("allow-recursion"), nc.L(v.AllowRecursionList.Stmts()...)))
	}
	body = append(body, b.viewOptions(v)...)
	return append(body, b.zones(v)...)
}

// viewKeys are the keys that select a view: its transfer key, and the update
// keys of its dynamic zones and the keys its zones' allowTransfer admits
// that no other view's zones use (a key shared by two views cannot pick one;
// such requests match by address like any client). A partner allowed to
// transfer by key in one view must reach that view even when its address
// matches another view first (docs/validation.md).
func viewKeys(c *model.Cluster) map[*model.View][]string {
	users := map[string]map[*model.View]bool{}
	use := func(k string, v *model.View) {
		if users[k] == nil {
			users[k] = map[*model.View]bool{}
		}
		users[k][v] = true
	}
	transfer := map[string]bool{}
	for _, v := range c.Views {
		transfer[v.TransferKey.KeyName] = true
		for _, z := range v.Zones {
			if z.UpdateKey != nil && z.Spec.DynamicUpdate {
				use(z.UpdateKey.KeyName, v)
			}
			if z.Spec.Type == v1alpha1.ZonePrimary || z.Spec.Type == v1alpha1.ZoneSecondary {
				for _, e := range z.AllowTransfer {
					if e.Key != "" && !e.Negated {
						use(e.Key, v)
					}
				}
			}
		}
	}
	out := map[*model.View][]string{}
	for _, v := range c.Views {
		keys := []string{v.TransferKey.KeyName}
		for k, vs := range users {
			if len(vs) == 1 && vs[v] && !transfer[k] {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys[1:])
		out[v] = keys
	}
	return out
}

// zones renders the zone statements of a view: its catalog, the include of
// each shard's statements, mirrored zones and policy zones.
func (b *confBuilder) zones(v *model.View) []nc.Stmt {
	var out []nc.Stmt
	if b.catalogName(v) != "" {
		out = append(out, b.catalogZone(v))
	}
	// Every other zone's statement is in its shard (docs/state.md#shards).
	for i := 0; i < b.plan.shards; i++ {
		out = append(out, nc.S(nc.Kw("include"), nc.Str(layout.ZoneFile(i, layout.ZonesConfFile(roleName(b.role), v.Name)))))
	}
	out = append(out, b.mirrorZones(v)...)
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
	cat := b.catalogName(v)
	name := []nc.Word{nc.Kw("zone"), nc.Str(bare(cat))}
	file := layout.DataPath(catzSubdir(v), fileName("catalog", "", cat))
	if b.relay() {
		ds := b.downstreams(cat, true)
		return nc.B(name,
			nc.S(nc.Kw("type"), nc.Kw("secondary")),
			nc.S(nc.Kw("file"), nc.Str(file)),
			nc.S(nc.Kw("primaries"), nc.L(nc.S(nc.Str(layout.UpstreamListName)))),
			b.relayTransfer(v, ds),
			nc.S(nc.Kw("notify"), nc.Kw("explicit")),
			relayNotify(v, ds),
		)
	}
	if b.role == Primary {
		ds := b.downstreams(cat, true)
		xfr := append([]nc.Stmt{nc.S(nc.Kw("key"), nc.Str(v.TransferKey.KeyName))}, downstreamKeys(ds, v.TransferKey.KeyName)...)
		return nc.B(name,
			nc.S(nc.Kw("type"), nc.Kw("primary")),
			nc.S(nc.Kw("file"), nc.Str(b.plan.catalogs[v.Name])),
			nc.S(nc.Kw("allow-transfer"), nc.L(xfr...)),
			nc.S(nc.Kw("notify"), nc.Kw("explicit")),
			relayNotify(v, ds),
		)
	}
	return nc.B(name,
		nc.S(nc.Kw("type"), nc.Kw("secondary")),
		nc.S(nc.Kw("file"), nc.Str(file)),
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
		xfr = append(xfr, updateKeyTransfer(v, z)...)
		ds := b.downstreams(z.Name, false)
		xfr = append(xfr, downstreamKeys(ds, v.TransferKey.KeyName)...)
		xfr = append(xfr, z.AllowTransfer.Stmts()...)
		body = append(body, nc.S(nc.Kw("allow-transfer"), nc.L(xfr...)))
		notify := []nc.Stmt{nc.S(nc.Str(layout.SecondariesListName(v.Name)))}
		notify = append(notify, downstreamNotify(ds)...)
		notify = append(notify, servers(z.AlsoNotify)...)
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
			body = append(body, nc.S(nc.Kw("key-directory"), nc.Str(layout.DataPath(primaryDir))))
			// The signed serial follows the clock: after the primary loses its
			// volume and re-signs, the serial is still above the one the
			// secondaries hold, so they transfer again (dnssec.go).
			body = append(body, nc.S(nc.Kw("serial-update-method"), nc.Kw("unixtime")))
			body = append(body, b.checkDS(z)...)
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
		prim := keyedServers(z.Primaries, key)
		body = append(body,
			nc.S(nc.Kw("type"), nc.Kw(typ)),
			nc.S(nc.Kw("file"), nc.Str(secondaryFile(v, z))),
			nc.S(nc.Kw("primaries"), nc.L(prim...)),
		)
		if sp.Type == v1alpha1.ZoneSecondary {
			body = append(body, secondaryZoneOptions(v, z, key)...)
		}
	case v1alpha1.ZoneForward:
		only := sp.ForwardOnly == nil || *sp.ForwardOnly
		fwd := "first"
		if only {
			fwd = "only"
		}
		body = append(body,
			nc.S(nc.Kw("type"), nc.Kw("forward")),
			nc.S(nc.Kw("forward"), nc.Kw(fwd)),
			nc.S(nc.Kw("forwarders"), nc.L(servers(z.Forwarders)...)),
		)
	default: // the model refuses other types
		return nc.Stmt{}, false
	}
	if aq := b.zoneAllowQuery(v, z); len(aq) > 0 {
		body = append(body, nc.S(nc.Kw("allow-query"), nc.L(aq...)))
	}
	return nc.B(head, body...), true
}

// secondaryZoneOptions are the statements of a secondary zone beside its
// primaries: BIND serves transfers and sends NOTIFYs from a secondary zone
// too (a tiered or stealth secondary feeds the next server), so
// spec.allowTransfer and spec.alsoNotify are rendered as on a primary zone,
// after the view's transfer key (the cluster's own agent and peers). With
// a transfer key (a keyed primary, such as another cluster's <c>-primary
// Service) the zone admits NOTIFYs signed by that key: they leave the
// primary from its pods' addresses, not the address in spec.primaries,
// which is all BIND admits by default (allow-notify widens that list,
// never narrows it).
func secondaryZoneOptions(v *model.View, z *model.Zone, key string) []nc.Stmt {
	var out []nc.Stmt
	if len(z.AllowTransfer) > 0 {
		xfr := append([]nc.Stmt{nc.S(nc.Kw("key"), nc.Str(v.TransferKey.KeyName))}, z.AllowTransfer.Stmts()...)
		out = append(out, nc.S(nc.Kw("allow-transfer"), nc.L(xfr...)))
	}
	if len(z.AlsoNotify) > 0 {
		out = append(out,
			nc.S(nc.Kw("notify"), nc.Kw("explicit")),
			nc.S(nc.Kw("also-notify"), nc.L(servers(z.AlsoNotify)...)),
		)
	}
	if key != "" {
		out = append(out, nc.S(nc.Kw("allow-notify"), nc.L(nc.S(nc.Kw("key"), nc.Str(key)))))
	}
	return out
}

// updateKeyTransfer is the primary's allow-transfer element for a dynamic
// zone's update key: RFC 2136 clients (external-dns) list the zone by a
// TSIG-signed AXFR with the key they update with. Off with
// spec.updateKeyTransfer: false; nothing when it is the transfer key.
func updateKeyTransfer(v *model.View, z *model.Zone) []nc.Stmt {
	if !z.UpdateKeyTransfers() || z.UpdateKey.KeyName == v.TransferKey.KeyName {
		return nil
	}
	return []nc.Stmt{nc.S(nc.Kw("key"), nc.Str(z.UpdateKey.KeyName))}
}

// transferKeys are key elements for every view's transfer key, sorted.
func (b *confBuilder) transferKeys() []nc.Stmt {
	var names []string
	for _, v := range b.c.Views {
		names = append(names, v.TransferKey.KeyName)
	}
	sort.Strings(names)
	var out []nc.Stmt
	for i, n := range names {
		if i > 0 && n == names[i-1] {
			continue
		}
		out = append(out, nc.S(nc.Kw("key"), nc.Str(n)))
	}
	return out
}

// zoneAllowQuery is a zone's allow-query, or nothing to inherit the
// cluster's. A restricted list always admits, first, the in-pod agent's
// keys and nothing else: the view's transfer key (the agent's readiness
// and serial queries; its holders transfer the whole zone anyway) and, on
// the primary, a dynamic zone's update key (the agent reads the RRsets it
// converges and BIND checks UPDATEs against allow-query; its holders may
// rewrite the zone anyway). Loopback is never added: every process of the
// pod shares it. A dynamic zone without its own list repeats the cluster's
// with its update key, which the cluster-wide list must not admit to other
// zones.
func (b *confBuilder) zoneAllowQuery(v *model.View, z *model.Zone) []nc.Stmt {
	sp := z.Spec
	if sp.Type == v1alpha1.ZoneForward {
		return nil
	}
	list := z.AllowQuery
	update := b.role == Primary && sp.Type == v1alpha1.ZonePrimary && sp.DynamicUpdate && z.UpdateKey != nil
	if r := b.c.Spec.Replication; r != nil && r.Hidden && len(sp.AllowQuery) == 0 {
		// A hidden cluster admits queries by transfer key only; BIND
		// checks UPDATEs against allow-query, so a dynamic zone admits its
		// update key too.
		if !update {
			return nil
		}
		return append(b.hiddenQuery(), nc.S(nc.Kw("key"), nc.Str(z.UpdateKey.KeyName)))
	}
	if len(sp.AllowQuery) == 0 {
		if !update || len(b.c.Spec.AllowQuery) == 0 {
			return nil
		}
		list = b.c.AllowQuery
	}
	if list.AdmitsAll() {
		if len(sp.AllowQuery) == 0 {
			return nil
		}
		return list.Stmts()
	}
	out := []nc.Stmt{nc.S(nc.Kw("key"), nc.Str(v.TransferKey.KeyName))}
	if update && z.UpdateKey.KeyName != v.TransferKey.KeyName {
		out = append(out, nc.S(nc.Kw("key"), nc.Str(z.UpdateKey.KeyName)))
	}
	return append(out, list.Stmts()...)
}

// secondaryFile is where named keeps a transferred zone.
func secondaryFile(v *model.View, z *model.Zone) string {
	return layout.DataPath(secondaryDir, fileName("db", v.Name, z.Name))
}

// fileName is model.ZoneFileName.
func fileName(prefix, view, zone string) string { return model.ZoneFileName(prefix, view, zone) }

func (b *confBuilder) dnssecPolicy(p *model.DNSSECPolicy) nc.Stmt {
	sp := p.Spec
	var keys []nc.Stmt
	for _, k := range p.Keys {
		w := []nc.Word{nc.Kw(k.Role), nc.Kw("lifetime"), nc.Kw(k.Lifetime.Text), nc.Kw("algorithm"), nc.Kw(k.Algorithm)}
		if k.Bits != nil {
			w = append(w, nc.Int(int64(*k.Bits)))
		}
		keys = append(keys, nc.S(w...))
	}
	body := []nc.Stmt{nc.S(nc.Kw("keys"), nc.L(keys...))}
	for _, d := range p.Durations {
		body = append(body, nc.S(nc.Kw(d.Keyword), nc.Kw(d.Value.Text)))
	}
	body = append(body, b.cdsOptions(p)...)
	if n := sp.NSEC3; n != nil {
		// One statement in BIND's grammar (9.18 and 9.20), not a block.
		body = append(body, nc.S(nc.Kw("nsec3param"),
			nc.Kw("iterations"), nc.Int(int64(n.Iterations)),
			nc.Kw("optout"), yesNo(n.OptOut),
			nc.Kw("salt-length"), nc.Int(int64(n.SaltLength)),
		))
	}
	return nc.B([]nc.Word{nc.Kw("dnssec-policy"), nc.Str(p.Name)}, body...)
}
