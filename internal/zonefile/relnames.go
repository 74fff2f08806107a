package zonefile

import (
	"net"
	"reflect"
	"strings"
	"sync"

	"github.com/miekg/dns"
	"golang.org/x/net/publicsuffix"

	"git.unkin.net/unkin/bind-fn/internal/diag"
)

// A zone file reads a name without a trailing dot as relative to the zone:
// "mail.example.com" in zone example.com is mail.example.com.example.com.
// That is the parser's rule and BIND's, and the commonest slip in a zone.
// These checks look at every name the user wrote (owners, nameservers, the
// SOA names, and every domain-name field of every record type, found by
// miekg/dns's own struct tags) and report the names that almost certainly
// do not mean what they say:
//
//   - slipZone: a relative name of two labels or more that ends with the
//     zone's own name. It repeats the zone (x.example.com.example.com.),
//     which nobody means; the rare name that does can be written absolute.
//     An error. (One label is never reported: in a one-label zone "lan", a
//     host "lan" is lan.lan., which may be meant.)
//   - slipTLD: a relative name of two labels or more whose last label is a
//     top-level domain (cdn.example.net, foo.io). A zone may hold such
//     labels (api.dev.example.com. is a real name, and .dev, .app, .zone
//     are TLDs), so a warning; written absolute, it is silent.
//   - slipAddress: an IP address where a domain name belongs (MX 10
//     192.0.2.25): it becomes the name 192.0.2.25.example.com., which
//     resolves to nothing the user meant. BIND warns ("MX is an address")
//     for MX only. An error. Owners are exempt (reverse and DNSBL zones
//     hold reversed addresses as owner names), and so is the next name of
//     an NSEC chain, which follows those owners.
//
// Quoted and opaque data (TXT, SPF, CAA, the strings of NAPTR) holds no
// name and is never looked at.
type slip int

const (
	slipNone slip = iota
	slipZone
	slipTLD
	slipAddress
)

// probeOrigin is the origin a value is parsed against a second time, to
// learn which of its names were written relative: those end in it. No name
// a user writes ends in it (.invalid is reserved, RFC 6761).
const probeOrigin = "relative.bind-fn.invalid."

// isAddress reports whether a name as written (without a trailing dot) is
// an IPv4 or IPv6 address, as BIND's check_mx tests it (inet_pton).
func isAddress(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || strings.Trim(s, "0123456789abcdefABCDEF.:") != "" {
		return false // not worth a parse
	}
	return net.ParseIP(s) != nil
}

// isTLD reports whether a label (lower case) is a top-level domain of the
// ICANN section of the Public Suffix List (golang.org/x/net/publicsuffix,
// compiled into the binary: no network). Only one label is asked, so the
// list's private section (github.io, blogspot.com: always two labels or
// more) never matches; special-use names that are not delegated (local,
// internal, lan, home, corp, example, test) are not TLDs here. The label
// is asked under a child too, for TLDs listed only by a wildcard (*.ck).
func isTLD(label string) bool {
	if label == "" || strings.ContainsAny(label, `\*`) {
		return false
	}
	ps, icann := publicsuffix.PublicSuffix("x." + label)
	return icann && (ps == label || ps == "x."+label)
}

// classify tells what a name as written means in zone origin: whether it
// is a slip, and the absolute name it becomes. addr says whether an
// address there is a slip.
func classify(written, origin string, addr bool) (slip, string) {
	if written == "" || written == "@" {
		return slipNone, origin
	}
	fqdn := dns.IsFqdn(written)
	mean := func() string {
		switch {
		case fqdn:
			return written
		case origin == ".":
			return written + "."
		}
		return written + "." + origin
	}
	if addr && isAddress(written) {
		return slipAddress, mean()
	}
	if fqdn || origin == "." {
		return slipNone, ""
	}
	last := lastLabel(written)
	if last == written {
		// One label (com, dev, or the name of a one-label zone) may well
		// be a label below the zone: never reported.
		return slipNone, ""
	}
	zone := strings.TrimSuffix(origin, ".")
	if strings.EqualFold(written, zone) || labelSuffix(written, zone) {
		return slipZone, mean()
	}
	if isTLD(strings.ToLower(last)) {
		return slipTLD, mean()
	}
	return slipNone, ""
}

// lastLabel is the last label of a relative name (the name itself when
// it has one label).
func lastLabel(name string) string {
	if strings.IndexByte(name, '\\') >= 0 {
		l := dns.SplitDomainName(name)
		if len(l) < 2 {
			return name
		}
		return l[len(l)-1]
	}
	return name[strings.LastIndexByte(name, '.')+1:]
}

// suspect is classify's quick test on a name the parser made absolute
// against origin: false when no way of writing it could be a slip, so
// that the value need not be parsed a second time.
func suspect(abs, origin string) bool {
	if isAddress(abs) {
		return true
	}
	if origin == "." || !labelSuffix(abs, origin) {
		return false
	}
	rest := abs[:len(abs)-len(origin)-1]
	zone := strings.TrimSuffix(origin, ".")
	if strings.EqualFold(rest, zone) || labelSuffix(rest, zone) || isAddress(rest) {
		return true
	}
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		return isTLD(strings.ToLower(rest[i+1:]))
	}
	return false
}

// labelSuffix reports whether name ends in "."+suffix, in any case.
func labelSuffix(name, suffix string) bool {
	n := len(name) - len(suffix)
	return n > 0 && name[n-1] == '.' && strings.EqualFold(name[n:], suffix)
}

// nameRef is one domain name held by a record's RDATA.
type nameRef struct {
	name string
	// addr: an address written there is a slip (not so for the next name
	// of an NSEC chain).
	addr bool
}

// rdataNames are the domain names in rr's RDATA: the fields miekg/dns
// tags "domain-name" or "cdomain-name" (its wire format's own list), and
// the gateway of an IPSECKEY or AMTRELAY when its type says it is a name.
// The common types are read directly; the others by reflection, once per
// type. The names are appended to out.
func rdataNames(rr dns.RR, out []nameRef) []nameRef {
	switch r := rr.(type) {
	case *dns.A, *dns.AAAA, *dns.TXT:
		return out
	case *dns.CNAME:
		return append(out, nameRef{r.Target, true})
	case *dns.MX:
		return append(out, nameRef{r.Mx, true})
	case *dns.NS:
		return append(out, nameRef{r.Ns, true})
	case *dns.PTR:
		return append(out, nameRef{r.Ptr, true})
	case *dns.SRV:
		return append(out, nameRef{r.Target, true})
	case *dns.IPSECKEY:
		if r.GatewayType == dns.IPSECGatewayHost {
			return append(out, nameRef{r.GatewayHost, true})
		}
		return out
	case *dns.AMTRELAY:
		if r.GatewayType&0x7f == dns.AMTRELAYHost {
			return append(out, nameRef{r.GatewayHost, true})
		}
		return out
	}
	v := reflect.ValueOf(rr)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return out
	}
	v = v.Elem()
	for _, f := range nameFieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.index)
		switch fv.Kind() {
		case reflect.String:
			out = append(out, nameRef{fv.String(), f.addr})
		case reflect.Slice:
			for i := 0; i < fv.Len(); i++ {
				out = append(out, nameRef{fv.Index(i).String(), f.addr})
			}
		}
	}
	return out
}

type nameField struct {
	index []int
	addr  bool
}

var nameFieldCache sync.Map // reflect.Type -> []nameField

// nameFieldsOf lists the domain-name fields of an RR struct type,
// embedded structs (SIG's RRSIG, NXT's NSEC, HTTPS's SVCB) included, the
// header's owner excluded.
func nameFieldsOf(t reflect.Type) []nameField {
	if c, ok := nameFieldCache.Load(t); ok {
		return c.([]nameField)
	}
	var out []nameField
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				if f.Type != reflect.TypeOf(dns.RR_Header{}) {
					walk(f.Type, idx)
				}
				continue
			}
			switch f.Tag.Get("dns") {
			case "domain-name", "cdomain-name":
				out = append(out, nameField{index: idx, addr: !(t == reflect.TypeOf(dns.NSEC{}) && f.Name == "NextDomain")})
			}
		}
	}
	walk(t, nil)
	nameFieldCache.Store(t, out)
	return out
}

// checkWritten reports a slip in a name the user wrote (an owner, a
// nameserver, the SOA MNAME), at field. what names the name ("the owner
// name", "the nameserver"). It returns false on an error.
func (b *builder) checkWritten(src diag.Source, field, written, what string, addr bool) bool {
	s, mean := classify(written, b.origin, addr)
	return b.reportSlip(src, field, s, written, mean, what, "")
}

// checkOwner reports a slip in an owner as written. An NS RRset at the
// zone's name written without its dot was meant for the apex, which is
// not set there: the message says where it is.
func (b *builder) checkOwner(src diag.Source, field, written string, typ uint16) bool {
	s, mean := classify(written, b.origin, false)
	hint := ""
	if typ == dns.TypeNS && strings.EqualFold(written, strings.TrimSuffix(b.origin, ".")) {
		hint = "; the apex NS RRset itself is set by BindZone.spec.nameservers"
	}
	return b.reportSlip(src, field, s, written, mean, "the owner name", hint)
}

// checkValueNames reports the slips among the domain names of one parsed
// value v of type tname. It returns false on an error.
func (b *builder) checkValueNames(src diag.Source, field string, e entry, typ uint16, tname, v string) bool {
	var buf [4]nameRef
	names := rdataNames(e.rr, buf[:0])
	sus := false
	for _, n := range names {
		if suspect(n.name, b.origin) {
			sus = true
			break
		}
	}
	if !sus {
		return true
	}
	// Parse again against probeOrigin: the names written relative end in
	// it. Same value, same type: the same fields in the same order.
	h := e.rr.Header()
	p, err := parseValue(h.Name, h.Ttl, typ, tname, v, probeOrigin)
	if err != nil {
		return true
	}
	probed := rdataNames(p.rr, nil)
	if len(probed) != len(names) {
		return true
	}
	ok := true
	what := "a name in this " + tname + " value"
	for _, n := range probed {
		written := n.name
		switch {
		case strings.EqualFold(written, probeOrigin):
			written = "@"
		case strings.HasSuffix(strings.ToLower(written), "."+probeOrigin):
			written = written[:len(written)-len(probeOrigin)-1]
		}
		s, mean := classify(written, b.origin, n.addr)
		if !b.reportSlip(src, field, s, written, mean, what, "") {
			ok = false
		}
	}
	return ok
}

// reportSlip writes the result for slip s of a name as written, which
// means mean; hint ends an error's message when not empty.
func (b *builder) reportSlip(src diag.Source, field string, s slip, written, mean, what, hint string) bool {
	switch s {
	case slipZone:
		rel := "@"
		if z := strings.TrimSuffix(b.origin, "."); len(written) > len(z) {
			rel = written[:len(written)-len(z)-1]
		}
		b.rs.Errorf(src, field, "cannot use %q as %s: without a trailing dot it is relative to the zone and means %s, the zone's name twice; write %q for the absolute name, or %q relative to the zone (%q, with its dot, if you do mean that name)%s", written, what, mean, written+".", rel, mean, hint)
		return false
	case slipTLD:
		b.rs.Warnf(src, field, "%q (%s) has no trailing dot, so it is relative to the zone and means %s, although it ends in the top-level domain %q; write %q if you meant the absolute name, or %q to keep this name without this warning", written, what, mean, tldOf(written), written+".", mean)
	case slipAddress:
		b.rs.Errorf(src, field, "cannot use %q as %s: it is an IP address, and a domain name belongs there (it would mean the name %s, not the address); name a host that has this address (an A or AAAA record) instead", written, what, mean)
		return false
	}
	return true
}

func tldOf(name string) string {
	l := dns.SplitDomainName(strings.ToLower(name))
	if len(l) == 0 {
		return ""
	}
	return l[len(l)-1]
}

// RelativeSlip reports whether name, written relative to zone origin
// (absolute, with its trailing dot), is a name the checks here report: one
// that repeats the zone's name or ends in a top-level domain. Writers of
// packages (the importer) write such a name absolute instead.
func RelativeSlip(name, origin string) bool {
	s, _ := classify(name, dns.CanonicalName(dns.Fqdn(origin)), false)
	return s != slipNone
}
