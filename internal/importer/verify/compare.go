package verify

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/plan"
)

// dnssecTypes are the records signing adds; DNSKEYs are compared apart.
var dnssecTypes = map[uint16]bool{dns.TypeRRSIG: true, dns.TypeNSEC: true, dns.TypeNSEC3: true, dns.TypeNSEC3PARAM: true, dns.TypeDNSKEY: true, dns.TypeCDS: true, dns.TypeCDNSKEY: true, 65534: true}

func (v *verifier) compare() {
	for _, z := range v.opt.Result.Zones {
		if z.Kind != "zone" {
			continue
		}
		v.compareZone(z.View, z.Name, z.File, z.RRs)
	}
	v.compareCatalogs()
	v.recursionProbes()
	v.compareNotifies()
	// Last: an accepted UPDATE changes the zone (and is removed again).
	v.updateProbes()
}

// recursionProbes ask both servers, from every client address of every
// view, for a name in no zone with recursion desired: REFUSED where the
// client may not recurse (or query), an answer or a timeout (the
// forwarders are out of reach here) where it may. Who may recurse must
// be the same.
func (v *verifier) recursionProbes() {
	for _, c := range v.clients {
		for _, src := range c.all {
			a, errA := v.queryFrom(v.orig, src, "bind-fn-verify.invalid", dns.TypeA, true)
			b, errB := v.queryFrom(v.rend, src, "bind-fn-verify.invalid", dns.TypeA, true)
			v.sum.Queries++
			if ra, rb := refused(a, errA), refused(b, errB); ra != rb {
				v.lose("view "+c.view, fmt.Sprintf("recursion from %s (view %q)", src, c.view), fmt.Sprintf("the original answers %s; the rendered %s", answerText(a, errA), answerText(b, errB)))
			}
		}
	}
}

// refused says whether a recursive query was refused (rather than
// answered or left to time out at unreachable forwarders).
func refused(m *dns.Msg, err error) bool {
	return err == nil && m.Rcode == dns.RcodeRefused
}

func (v *verifier) queryFrom(s *server, src, name string, qtype uint16, rd bool) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = rd
	cl := &dns.Client{Net: "tcp", Timeout: 3 * time.Second, Dialer: &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 3 * time.Second}}
	r, _, err := cl.Exchange(m, net.JoinHostPort(s.ip, "53"))
	return r, err
}

// keyFor is the TSIG key a transfer of zone in view is signed with on
// each side: the original's from the zone's allow-transfer (or the key
// that selects the view), the rendered's the view's transfer key.
func (v *verifier) keyFor(view, zone string) (orig, rend string) {
	c := v.clientOf(view)
	orig = c.key
	for _, o := range v.opt.Result.Objects["zones.yaml"] {
		z := o.(*v1alpha1.BindZone)
		if z.Spec.ZoneName != zone || (view != "" && z.Spec.ViewRef != c.obj) {
			continue
		}
		for _, e := range z.Spec.AllowTransfer {
			if k, ok := strings.CutPrefix(e, "key "); ok {
				orig = strings.Trim(k, `"`)
				break
			}
		}
	}
	rend = v.cluster + "-xfr"
	if view != "" {
		rend = v.cluster + "-" + view + "-xfr"
	}
	if _, ok := v.keys[rend]; !ok {
		for _, o := range v.opt.Result.Objects["catalog.yaml"] {
			cz := o.(*v1alpha1.BindCatalogZone)
			if cz.Spec.TransferKeyRef != "" && (view == "" || cz.Spec.ViewRef == c.obj) {
				for _, s := range v.opt.Result.Secrets {
					if s.Name == cz.Spec.TransferKeyRef+"-tsig" || s.Name == cz.Spec.TransferKeyRef {
						rend = s.StringData["keyName"]
					}
				}
			}
		}
	}
	return orig, rend
}

func (v *verifier) compareZone(view, zone, file string, imported []dns.RR) {
	id := zoneID(view, zone)
	where := file + ":1"
	ko, kr := v.keyFor(view, zone)
	c := v.clientOf(view)
	orig, oerr := v.axfr(v.orig.ip, c.src, zone, ko)
	rend, rerr := v.axfr(rendIP, c.src, zone, kr)
	if rerr != nil {
		v.lose(where, "zone "+id, "the rendered primary refuses its transfer key's AXFR: "+rerr.Error())
		return
	}
	v.sum.Zones++
	// Where the original is read by queries (which leave DNSSEC records
	// out), the rendered side's DNSKEYs say whether the zone is signed.
	rendSigned := false
	for _, rr := range rend {
		if _, ok := rr.(*dns.DNSKEY); ok {
			rendSigned = true
		}
	}
	if oerr != nil {
		// The original does not transfer to this client: compare what it
		// answers for every RRset the import read instead.
		v.sum.Notes = append(v.sum.Notes, fmt.Sprintf("zone %s: the original refuses AXFR (%v); compared by a query for each RRset the import read", id, oerr))
		orig = nil
		seen := map[string]bool{}
		for _, rr := range imported {
			h := rr.Header()
			k := dns.CanonicalName(h.Name) + "/" + dns.TypeToString[h.Rrtype]
			if seen[k] || dnssecTypes[h.Rrtype] {
				continue
			}
			seen[k] = true
			if m, err := v.query(v.orig, view, h.Name, h.Rrtype, false); err == nil {
				for _, a := range m.Answer {
					if a.Header().Rrtype == h.Rrtype && dns.CanonicalName(a.Header().Name) == dns.CanonicalName(h.Name) {
						orig = append(orig, a)
					}
				}
			}
		}
		var sub []dns.RR
		for _, rr := range rend {
			if seen[dns.CanonicalName(rr.Header().Name)+"/"+dns.TypeToString[rr.Header().Rrtype]] {
				sub = append(sub, rr)
			}
		}
		rend = sub
	}
	signed := oerr != nil && rendSigned
	var ko2, kr2 []string
	for _, rr := range orig {
		if k, ok := rr.(*dns.DNSKEY); ok {
			signed = true
			ko2 = append(ko2, fmt.Sprintf("%d/%d/%d", k.Flags, k.Algorithm, k.KeyTag()))
		}
	}
	for _, rr := range rend {
		if k, ok := rr.(*dns.DNSKEY); ok {
			kr2 = append(kr2, fmt.Sprintf("%d/%d/%d", k.Flags, k.Algorithm, k.KeyTag()))
		}
	}
	sort.Strings(ko2)
	sort.Strings(kr2)
	if strings.Join(ko2, " ") != strings.Join(kr2, " ") && oerr == nil {
		v.lose(where, "zone "+id+" DNSKEY", fmt.Sprintf("the original is signed with keys [%s], the rendered with [%s]: the parent's DS matches only the original's", strings.Join(ko2, " "), strings.Join(kr2, " ")))
	}
	want, _ := plan.ZoneDataOf(without(orig))
	got, _ := plan.ZoneDataOf(without(rend))
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		w, wok := want[k]
		g, gok := got[k]
		switch {
		case !gok:
			v.lose(where, id+" "+k, fmt.Sprintf("BIND serves it from the original (TTL %d %s), not from the rendered package", w.TTL, strings.Join(w.Values, " | ")))
		case !wok:
			v.lose(where, id+" "+k, fmt.Sprintf("the rendered package serves it (TTL %d %s), the original does not", g.TTL, strings.Join(g.Values, " | ")))
		case !cmp.Equal(w, g):
			v.lose(where, id+" "+k, fmt.Sprintf("the original serves TTL %d %s, the rendered TTL %d %s", w.TTL, strings.Join(w.Values, " | "), g.TTL, strings.Join(g.Values, " | ")))
		}
	}
	if hasSOA(orig) {
		// By AXFR, or by the SOA query when the original refuses AXFR.
		v.serialCheck(where, id, orig, rend, signed, v.pinned(view, zone))
	}
	v.sampleQueries(view, zone, where, want)
}

func hasSOA(rrs []dns.RR) bool {
	for _, rr := range rrs {
		if _, ok := rr.(*dns.SOA); ok {
			return true
		}
	}
	return false
}

// pinned is the serial the import carried for a zone (0: none): the
// served serial its render counts up from.
func (v *verifier) pinned(view, zone string) uint32 {
	obj := ""
	if view != "" {
		obj = v.clientOf(view).obj
	}
	s, _ := v.opt.Result.ServedSerial(obj, zone)
	return s
}

func without(rrs []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		if !dnssecTypes[rr.Header().Rrtype] {
			out = append(out, rr)
		}
	}
	return out
}

// sampleQueries asks both servers, from the view's client, for the apex
// SOA and NS and a few of the zone's RRsets, once without and once with
// recursion desired: the answers, AA and RA (whether this client may
// recurse) must match.
func (v *verifier) sampleQueries(view, zone, where string, data plan.ZoneData) {
	type q struct {
		name string
		typ  uint16
	}
	qs := []q{{zone, dns.TypeSOA}, {zone, dns.TypeNS}, {"bind-fn-verify-absent." + zone, dns.TypeA}}
	var keys []string
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i%max(1, len(keys)/5) != 0 {
			continue
		}
		name, typ, _ := strings.Cut(k, " ")
		if t, ok := dns.StringToType[typ]; ok {
			qs = append(qs, q{name, t})
		}
	}
	for _, x := range qs {
		for _, rd := range []bool{false, true} {
			a, errA := v.query(v.orig, view, x.name, x.typ, rd)
			b, errB := v.query(v.rend, view, x.name, x.typ, rd)
			v.sum.Queries++
			ta, tb := answerText(a, errA), answerText(b, errB)
			if ta != tb {
				v.lose(where, fmt.Sprintf("query %s %s (rd=%v) in view %q", x.name, dns.TypeToString[x.typ], rd, view), fmt.Sprintf("the original answers %s; the rendered %s", ta, tb))
			}
		}
	}
}

func answerText(m *dns.Msg, err error) string {
	if err != nil {
		return "no answer (" + err.Error() + ")"
	}
	var rrs []string
	for _, rr := range m.Answer {
		if dnssecTypes[rr.Header().Rrtype] {
			continue
		}
		if soa, ok := rr.(*dns.SOA); ok { // serials are compared apart
			c := *soa
			c.Serial = 0
			rr = &c
		}
		rrs = append(rrs, strings.Join(strings.Fields(rr.String()), " "))
	}
	sort.Strings(rrs)
	return fmt.Sprintf("%s aa=%v ra=%v [%s]", dns.RcodeToString[m.Rcode], m.Authoritative, m.RecursionAvailable, strings.Join(rrs, "; "))
}

// query sends one query to a server from the view's client (signed with
// its key when the view is reached by key).
func (v *verifier) query(s *server, view, name string, qtype uint16, rd bool) (*dns.Msg, error) {
	c := v.clientOf(view)
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = rd
	cl := &dns.Client{Net: "tcp", Timeout: 3 * time.Second}
	if c.src != "" {
		cl.Dialer = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(c.src)}, Timeout: 3 * time.Second}
	}
	if c.src == "" && c.key != "" {
		k, ok := v.keys[c.key]
		if !ok {
			return nil, fmt.Errorf("no secret for key %q", c.key)
		}
		cl.TsigSecret = map[string]string{dns.Fqdn(k.Name): k.Secret}
		m.SetTsig(dns.Fqdn(k.Name), alg(k.Algorithm), 300, time.Now().Unix())
	}
	r, _, err := cl.Exchange(m, net.JoinHostPort(s.ip, "53"))
	return r, err
}

func alg(a string) string {
	if a == "" {
		return dns.HmacSHA256
	}
	return dns.Fqdn(strings.ToLower(a))
}

// axfr transfers zone from server, from src, signed with key (none: "").
func (v *verifier) axfr(server, src, zone, key string) ([]dns.RR, error) {
	var k *importer.TSIG
	if key != "" {
		s, ok := v.keys[key]
		if !ok {
			return nil, fmt.Errorf("no secret for key %q", key)
		}
		k = &importer.TSIG{Name: s.Name, Algorithm: s.Algorithm, Secret: s.Secret}
	}
	return importer.TransferFrom(src, server, zone, k, 3*time.Second, 10*time.Second)
}

// compareCatalogs transfers every imported catalog zone from both sides
// and compares its members (by name: bind-fn's member labels are its own)
// and their properties.
func (v *verifier) compareCatalogs() {
	for _, z := range v.opt.Result.Zones {
		if z.Kind != "catalog" {
			continue
		}
		id := zoneID(z.View, z.Name)
		c := v.clientOf(z.View)
		ko := c.key
		for _, o := range v.opt.Result.Objects["catalog.yaml"] {
			cz := o.(*v1alpha1.BindCatalogZone)
			if cz.Spec.ZoneName == z.Name && cz.Spec.TransferKeyRef != "" {
				for _, s := range v.opt.Result.Secrets {
					if s.Name == cz.Spec.TransferKeyRef+"-tsig" {
						ko = s.StringData["keyName"]
					}
				}
			}
		}
		_, kr := v.keyFor(z.View, z.Name)
		orig, err := v.axfr(v.orig.ip, c.src, z.Name, ko)
		if err != nil {
			v.sum.Notes = append(v.sum.Notes, fmt.Sprintf("catalog %s: the original refuses AXFR (%v); members not compared", id, err))
			continue
		}
		rend, err := v.axfr(rendIP, c.src, z.Name, kr)
		if err != nil {
			v.lose("catalog "+id, "catalog "+id, "the rendered primary refuses its transfer: "+err.Error())
			continue
		}
		where := z.File + ":1"
		mo, po := catalogMembers(z.Name, orig)
		mr, pr := catalogMembers(z.Name, rend)
		for _, m := range unionKeys(mo, mr) {
			switch {
			case !mr[m]:
				v.lose(where, "catalog "+id+" member "+m, "the original's catalog lists it, the rendered's does not: the secondaries would drop the zone")
			case !mo[m]:
				v.lose(where, "catalog "+id+" member "+m, "the rendered catalog adds it")
			}
		}
		for _, p := range unionKeys(po, pr) {
			if po[p] != pr[p] {
				v.lose(where, "catalog "+id+" property "+p, fmt.Sprintf("the original's catalog has it: %v, the rendered's: %v", po[p], pr[p]))
			}
		}
		v.sum.Zones++
	}
}

// catalogMembers are a catalog's member zone names, and its member
// properties as "<member> <property> <type> <rdata>".
func catalogMembers(catalog string, rrs []dns.RR) (map[string]bool, map[string]bool) {
	zones := dns.CanonicalName("zones." + dns.Fqdn(catalog))
	labels := map[string]string{} // member label -> member name
	members, props := map[string]bool{}, map[string]bool{}
	for _, rr := range rrs {
		owner := dns.CanonicalName(rr.Header().Name)
		if p, ok := rr.(*dns.PTR); ok && dns.IsSubDomain(zones, owner) && dns.CountLabel(owner) == dns.CountLabel(zones)+1 {
			m := strings.TrimSuffix(strings.ToLower(p.Ptr), ".")
			members[m] = true
			labels[dns.SplitDomainName(owner)[0]] = m
		}
	}
	for _, rr := range rrs {
		owner := dns.CanonicalName(rr.Header().Name)
		if !dns.IsSubDomain(zones, owner) || dns.CountLabel(owner) <= dns.CountLabel(zones)+1 {
			continue
		}
		l := dns.SplitDomainName(strings.TrimSuffix(owner, "."+zones))
		member := labels[l[len(l)-1]]
		f := strings.Fields(rr.String())
		props[member+" "+strings.Join(l[:len(l)-1], ".")+" "+strings.Join(f[3:], " ")] = true
	}
	return members, props
}

func unionKeys(a, b map[string]bool) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// updateProbes send, for every imported TSIG key and every zone read from
// a file, an UPDATE adding a TXT record at bind-fn-verify-update.<zone>
// to both sides: who may update what must be the same (allow-update,
// update-policy): accepted on both or on neither. An accepted probe is
// deleted again.
func (v *verifier) updateProbes() {
	var keys []string
	for _, s := range v.opt.Result.Secrets {
		if n := s.StringData["keyName"]; n != "" {
			keys = append(keys, n)
		}
	}
	sort.Strings(keys)
	for _, z := range v.opt.Result.Zones {
		if z.Kind != "zone" {
			continue
		}
		for _, k := range keys {
			name := "bind-fn-verify-update." + dns.Fqdn(z.Name)
			a, errA := v.update(v.orig, z.View, z.Name, name, k, false)
			b, errB := v.update(v.rend, z.View, z.Name, name, k, false)
			v.sum.Queries++
			ra, rb := rcodeText(a, errA), rcodeText(b, errB)
			// Who may update what must match: one side accepting is the
			// difference. How a refusal reads (REFUSED, NOTAUTH, an unsigned
			// answer once a key selects another view) is not.
			if (ra == "NOERROR") != (rb == "NOERROR") {
				v.lose(z.File+":1", fmt.Sprintf("zone %s UPDATE signed with key %q", zoneID(z.View, z.Name), k), fmt.Sprintf("the original answers %s, the rendered %s", ra, rb))
			}
			if ra == "NOERROR" {
				_, _ = v.update(v.orig, z.View, z.Name, name, k, true)
			}
			if rb == "NOERROR" {
				_, _ = v.update(v.rend, z.View, z.Name, name, k, true)
			}
		}
	}
}

func rcodeText(m *dns.Msg, err error) string {
	if err != nil {
		return "no answer (" + err.Error() + ")"
	}
	return dns.RcodeToString[m.Rcode]
}

// update sends an UPDATE adding (or, del, removing) a TXT at name, from
// the view's client, signed with key.
func (v *verifier) update(s *server, view, zone, name, key string, del bool) (*dns.Msg, error) {
	k, ok := v.keys[key]
	if !ok {
		return nil, fmt.Errorf("no secret for key %q", key)
	}
	rr, err := dns.NewRR(name + " 60 IN TXT \"bind-fn verify\"")
	if err != nil {
		return nil, err
	}
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	if del {
		m.RemoveRRset([]dns.RR{rr})
	} else {
		m.Insert([]dns.RR{rr})
	}
	m.SetTsig(dns.Fqdn(k.Name), alg(k.Algorithm), 300, time.Now().Unix())
	cl := &dns.Client{Net: "tcp", Timeout: 3 * time.Second, TsigSecret: map[string]string{dns.Fqdn(k.Name): k.Secret}}
	if c := v.clientOf(view); c.src != "" {
		cl.Dialer = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(c.src)}, Timeout: 3 * time.Second}
	}
	r, _, err := cl.Exchange(m, net.JoinHostPort(s.ip, "53"))
	return r, err
}
