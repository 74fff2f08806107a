package render

import (
	"net/netip"
	"sort"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// A replication topology across Kubernetes clusters (docs/multi-cluster.md):
// pod 0 of a secondary cluster (the relay) is a secondary of the primary
// cluster's <cluster>-primary Service, reached at spec.replication's
// addresses with the shared key, and the primary of its own pods; pod 0 of
// every cluster that feeds secondary clusters admits their transfers by
// their keys and NOTIFYs their relays.

// relayRefreshSeconds bounds how long a relay goes without asking its
// primary cluster for the serial (max-refresh-time): a NOTIFY lost while
// the link between the clusters is down (BIND tries UDP, then TCP, once) is
// made up for within this time after the link returns, not the SOA's
// refresh (300 s). One SOA query per zone and relay this often.
const relayRefreshSeconds = 60

// relayRetrySeconds bounds the retry of a failed refresh (max-retry-time).
const relayRetrySeconds = 30

// relay reports whether this named.conf is a relay's: pod 0 of a secondary cluster.
func (b *confBuilder) relay() bool { return b.role == Primary && b.c.Upstream != nil }

// catalogName is the view's catalog zone: its own, or the primary cluster's
// on a secondary cluster ("" without one).
func (b *confBuilder) catalogName(v *model.View) string {
	if v.Catalog != nil {
		return v.Catalog.ZoneName
	}
	if b.c.Upstream != nil {
		return b.c.Upstream.Catalog
	}
	return ""
}

// downstreams are the secondary clusters pod 0 serves zone to (catalog: the
// catalog zone); nothing on the other pods.
func (b *confBuilder) downstreams(zone string, catalog bool) []*model.Downstream {
	if b.role != Primary {
		return nil
	}
	var out []*model.Downstream
	for _, d := range b.c.Downstreams {
		up := d.Cluster.Upstream
		if catalog {
			if up.Catalog == zone {
				out = append(out, d)
			}
			continue
		}
		for _, z := range up.Zones {
			if z.Name == zone {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// allDownstreams are every secondary cluster pod 0 feeds.
func (b *confBuilder) allDownstreams() []*model.Downstream {
	if b.role != Primary {
		return nil
	}
	return b.c.Downstreams
}

// downstreamKeys are key elements admitting the downstreams' transfers, each
// key once, sorted, leaving out the ones already in have.
func downstreamKeys(ds []*model.Downstream, have ...string) []nc.Stmt {
	seen := map[string]bool{}
	for _, h := range have {
		seen[h] = true
	}
	var names []string
	for _, d := range ds {
		if !seen[d.Key.KeyName] {
			seen[d.Key.KeyName] = true
			names = append(names, d.Key.KeyName)
		}
	}
	sort.Strings(names)
	out := make([]nc.Stmt, 0, len(names))
	for _, n := range names {
		out = append(out, nc.S(nc.Kw("key"), nc.Str(n)))
	}
	return out
}

// downstreamNotify are the server lists of the downstreams' relays.
func downstreamNotify(ds []*model.Downstream) []nc.Stmt {
	out := make([]nc.Stmt, 0, len(ds))
	for _, d := range ds {
		out = append(out, nc.S(nc.Str(layout.RemoteListName(d.Cluster.Name))))
	}
	return out
}

// peerServers are `server <addr> { keys { "<key>"; }; };` for every literal
// address pod 0 NOTIFYs in another cluster. BIND signs a NOTIFY with the
// also-notify entry's key on the first (UDP) attempt only; when that fails,
// the retry over TCP looks the key up in server statements and, without
// one, goes out unsigned (lib/dns/notify.c, notify_send_toaddr: the entry's
// key is handed to the first request), and the relay, which admits NOTIFYs
// from the primary cluster by key alone (their source is a pod address it
// cannot know), refuses it. A DNS name has no address at render time; its
// TCP retry stays unsigned (docs/multi-cluster.md).
func (b *confBuilder) peerServers() []nc.Stmt {
	type entry struct {
		addr netip.Addr
		key  string
	}
	seen := map[netip.Addr]bool{}
	var es []entry
	for _, d := range b.allDownstreams() {
		for _, h := range d.Hosts {
			a, err := netip.ParseAddr(h)
			if err != nil || seen[a] {
				continue // a name, or an address listed by two clusters (validate refuses that)
			}
			seen[a] = true
			es = append(es, entry{a, d.Key.KeyName})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].addr.Less(es[j].addr) })
	out := make([]nc.Stmt, 0, len(es))
	for _, e := range es {
		out = append(out, nc.B([]nc.Word{nc.Kw("server"), nc.Kw(e.addr.String())},
			nc.S(nc.Kw("keys"), nc.L(nc.S(nc.Str(e.key))))))
	}
	return out
}

// relayOptions are the relay's options: how often it asks its primary
// cluster at most, and, with a catalog, what the member zones the catalog
// provisions inherit (they have no zone statement of their own): transfers
// by the cluster's transfer key and its downstreams' keys, NOTIFYs to its
// own pods and its downstreams' relays.
func (b *confBuilder) relayOptions(v *model.View) []nc.Stmt {
	o := []nc.Stmt{
		nc.S(nc.Kw("max-refresh-time"), nc.Int(relayRefreshSeconds)),
		nc.S(nc.Kw("max-retry-time"), nc.Int(relayRetrySeconds)),
	}
	if cat := b.catalogName(v); cat != "" {
		ds := b.downstreams(cat, true)
		o = append(o, b.relayTransfer(v, ds), relayNotify(v, ds))
	}
	return o
}

// relayTransfer is the allow-transfer of what the relay serves: its own
// pods, and the secondary clusters it feeds in turn.
func (b *confBuilder) relayTransfer(v *model.View, ds []*model.Downstream) nc.Stmt {
	xfr := []nc.Stmt{nc.S(nc.Kw("key"), nc.Str(v.TransferKey.KeyName))}
	xfr = append(xfr, downstreamKeys(ds, v.TransferKey.KeyName)...)
	return nc.S(nc.Kw("allow-transfer"), nc.L(xfr...))
}

// relayNotify is the also-notify of what the relay serves.
func relayNotify(v *model.View, ds []*model.Downstream) nc.Stmt {
	n := []nc.Stmt{nc.S(nc.Str(layout.SecondariesListName(v.Name)))}
	n = append(n, downstreamNotify(ds)...)
	return nc.S(nc.Kw("also-notify"), nc.L(n...))
}

// mirrorZones are the zone statements of the zones a secondary cluster
// serves from its primary cluster (catalog members have none): on the
// relay, secondaries of the primary cluster; on the other pods, of the relay.
func (b *confBuilder) mirrorZones(v *model.View) []nc.Stmt {
	up := b.c.Upstream
	if up == nil {
		return nil
	}
	var out []nc.Stmt
	for _, z := range up.Zones {
		if z.CatalogMember {
			continue
		}
		head := []nc.Word{nc.Kw("zone"), nc.Str(bare(z.Name))}
		file := layout.DataPath(secondaryDir, fileName("db", v.Name, z.Name))
		if b.role == Secondary {
			out = append(out, nc.B(head,
				nc.S(nc.Kw("type"), nc.Kw("secondary")),
				nc.S(nc.Kw("file"), nc.Str(file)),
				nc.S(nc.Kw("primaries"), nc.L(nc.S(nc.Str(layout.PrimaryListName(v.Name))))),
			))
			continue
		}
		ds := b.downstreams(z.Name, false)
		out = append(out, nc.B(head,
			nc.S(nc.Kw("type"), nc.Kw("secondary")),
			nc.S(nc.Kw("file"), nc.Str(file)),
			nc.S(nc.Kw("primaries"), nc.L(nc.S(nc.Str(layout.UpstreamListName)))),
			b.relayTransfer(v, ds),
			nc.S(nc.Kw("notify"), nc.Kw("explicit")),
			relayNotify(v, ds),
		))
	}
	return out
}

// hiddenQuery is the allow-query of a hidden cluster: queries signed with
// a transfer key only (its secondary clusters' SOA queries and transfers,
// its own pods', the agent's).
func (b *confBuilder) hiddenQuery() []nc.Stmt {
	var names []string
	for _, v := range b.c.Views {
		names = append(names, v.TransferKey.KeyName)
	}
	out := b.transferKeys()
	return append(out, downstreamKeys(b.c.Downstreams, names...)...)
}
