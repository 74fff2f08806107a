package zonefile

import (
	"fmt"

	"github.com/miekg/dns"
)

// BIND's wire-size limits, checked where BIND checks them (its master-file
// loader): a label holds at most 63 octets ("label too long"), a name at
// most 255 in wire form after qualification, and an RRset's RDATA at most
// maxRRsetWire octets ("ran out of space"): each record's RDATA plus its
// 2-octet length. miekg/dns takes a name of 256 or 257 octets and any
// RRset, so these are checked here (TestWireLimits quotes BIND's messages
// from real named-checkzone runs on 9.18 and 9.20).

// maxRRsetWire is the most RDATA, each record's plus 2 octets, that BIND
// 9.18 and 9.20 load in one RRset: found with named-checkzone (253 TXT
// records of 256 octets load, 254 do not; 8186 of 6 octets and one of 22
// load, and one of 23 does not), so 65535 less 23 octets of BIND's own.
const maxRRsetWire = 65535 - 23

// nameLimitErr says which of BIND's limits an absolute name breaks, or nil.
func nameLimitErr(abs string) error {
	for _, l := range labelsOf(abs) {
		if b, err := charBytes(l); err == nil && len(b) > 63 {
			return fmt.Errorf("the label %q is %d octets, and a label holds at most 63 (BIND: \"label too long\")", l, len(b))
		}
	}
	buf := make([]byte, 512)
	n, err := dns.PackDomainName(abs, buf, 0, nil, false)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a valid domain name: every label needs 1 to 63 octets and the whole name at most 255", abs)
	case n > 255:
		return fmt.Errorf("%q is %d octets in wire form, and a name holds at most 255 (BIND: \"ran out of space\"); a name written without a trailing dot has the zone's name appended", abs, n)
	}
	return nil
}

// rdataNamesFit checks every domain name in a parsed record's RDATA
// against nameLimitErr.
func rdataNamesFit(rr dns.RR) error {
	var buf [4]nameRef
	for _, n := range rdataNames(rr, buf[:0]) {
		if err := nameLimitErr(n.name); err != nil {
			return err
		}
	}
	return nil
}

// rdataLen is the length of an RR's RDATA in wire form, names
// uncompressed.
func rdataLen(rr dns.RR) int { return len(rdataWire(rr)) }

// rdataWire is an RR's RDATA in wire form, names uncompressed and as
// written; nil if it does not pack.
func rdataWire(rr dns.RR) []byte {
	c := dns.Copy(rr)
	c.Header().Name = "."
	buf := make([]byte, dns.Len(c)+1)
	n, err := dns.PackRR(c, buf, 0, nil, false)
	if err != nil {
		return nil
	}
	return buf[11:n] // root owner (1), type, class, TTL, RDLENGTH (10)
}

// checkSetSize refuses an RRset BIND cannot hold.
func (b *builder) checkSetSize(s *rrset) {
	total := 0
	for _, e := range s.entries {
		total += rdataLen(e.rr) + 2
	}
	if total > maxRRsetWire {
		b.rs.Errorf(s.src, s.field+".values", "RRset %s %s is %d octets of wire data (each record's RDATA and its 2-octet length), and BIND holds at most %d in one RRset: it refuses the whole zone (\"ran out of space\"); split the data over more names, or shorten it", s.owner, dns.Type(s.typ), total, maxRRsetWire)
	}
}

// labelsOf splits a name in presentation form at its unescaped dots.
func labelsOf(name string) []string {
	var out []string
	start := 0
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '\\':
			i++
		case '.':
			out = append(out, name[start:i])
			start = i + 1
		}
	}
	if start < len(name) {
		out = append(out, name[start:])
	}
	return out
}
