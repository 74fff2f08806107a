package importer

import (
	"net"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// notifyMode is a zone's notify setting as BIND finds it: the zone's
// statement, else the view's, else options', else yes (BIND's default).
func (im *importer) notifyMode(zone namedconf.Located, view string) (string, namedconf.Located) {
	for _, s := range []namedconf.Located{zone, im.viewNotify[view], im.optNotify} {
		if s.Name() == "notify" {
			return strings.ToLower(s.Arg(1)), s
		}
	}
	return "yes", namedconf.Located{}
}

// notify carries a zone's NOTIFY targets. bind-fn's primary always sends
// `notify explicit` to its own secondaries and spec.alsoNotify, so:
// notify yes (and master-only/primary-only on a primary) becomes the
// addresses of the zone's NS set (all but the SOA MNAME, as BIND skips
// it) in alsoNotify — found in the zone itself; an NS name whose address
// is outside the zone cannot be resolved here and is a loss. notify no
// sends nothing: its also-notify is dropped. A secondary zone that
// notifies (yes, BIND's default) is a loss: bind-fn's secondaries send no
// NOTIFY.
func (im *importer) notify(s namedconf.Located, view string, z *v1alpha1.BindZone, rrs []dns.RR, zs namedconf.Located) {
	mode, where := im.notifyMode(zs, view)
	if where.Name() == "" {
		where = s
	}
	switch z.Spec.Type {
	case v1alpha1.ZoneSecondary:
		if mode == "yes" {
			im.lose(where, "a secondary zone that sends NOTIFY to its NS set (notify yes, BIND's default): bind-fn's secondaries send none; set notify no or explicit to accept")
			return
		}
		also := z.Spec.AlsoNotify
		if len(also) == 0 {
			if l, ok := im.alsoNotify[view]; ok {
				also = l
			} else {
				also = im.alsoNotify[""]
			}
		}
		if mode != "no" && len(also) > 0 {
			im.lose(where, "a secondary zone that NOTIFYs its also-notify list ("+strings.Join(also, "; ")+"): bind-fn's secondaries send none")
		}
		return
	case v1alpha1.ZonePrimary:
	default:
		return
	}
	switch mode {
	case "no":
		if len(z.Spec.AlsoNotify) > 0 {
			im.replaced(where, "notify no: the zone's also-notify is not sent by BIND, and is dropped")
			z.Spec.AlsoNotify = nil
		}
		return
	case "explicit":
		return
	case "yes", "master-only", "primary-only":
	default:
		im.lose(where, "a notify setting bind-fn cannot read")
		return
	}
	apex := dns.CanonicalName(dns.Fqdn(z.Spec.ZoneName))
	var mname string
	addrs := map[string][]string{}
	var ns []string
	for _, rr := range rrs {
		h := rr.Header()
		switch x := rr.(type) {
		case *dns.SOA:
			mname = dns.CanonicalName(x.Ns)
		case *dns.NS:
			if dns.CanonicalName(h.Name) == apex {
				ns = append(ns, dns.CanonicalName(x.Ns))
			}
		case *dns.A:
			addrs[dns.CanonicalName(h.Name)] = append(addrs[dns.CanonicalName(h.Name)], x.A.String())
		case *dns.AAAA:
			addrs[dns.CanonicalName(h.Name)] = append(addrs[dns.CanonicalName(h.Name)], x.AAAA.String())
		}
	}
	slices.Sort(ns)
	targets := append([]string(nil), z.Spec.AlsoNotify...)
	for _, n := range slices.Compact(ns) {
		if n == mname {
			continue
		}
		a, ok := addrs[n]
		if !ok {
			im.lose(where, "notify "+mode+" sends NOTIFY to NS "+n+", whose address is not in the zone: add it to BindZone "+z.Name+" spec.alsoNotify")
			continue
		}
		for _, ip := range a {
			if net.ParseIP(ip) != nil && !slices.Contains(targets, ip) {
				targets = append(targets, ip)
			}
		}
	}
	z.Spec.AlsoNotify = targets
}
