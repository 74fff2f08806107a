package zonefile

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"sort"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"github.com/miekg/dns"
)

// CatalogMember is one zone listed in a catalog.
type CatalogMember struct {
	// Zone is the member zone's name, canonical with a trailing dot.
	Zone string
	// Src and Field locate errors about the member (its BindZone and
	// spec.zoneName); when Src is zero they are reported on the catalog.
	Src   diag.Source
	Field string
}

// catalogTTL is the TTL of a catalog zone's records: RFC 9432 gives them no
// meaning, and its examples use 0.
const catalogTTL = 0

// Catalog builds an RFC 9432 version 2 catalog zone, as BIND 9.18 consumes
// it: the SOA, "NS invalid.", "version TXT 2" and one "<id>.zones PTR
// <member>." per member, members sorted. The id is the first 16 hex digits
// of the SHA-1 of the member's canonical wire name: stable across renders
// and independent of the other members.
func Catalog(c *model.Catalog, members []CatalogMember) (*Zone, diag.Results) {
	b := newBuilder(c.Src, c.ZoneName, "spec.zoneName")
	b.ttl = catalogTTL
	if b.origin == "" {
		return nil, b.rs
	}
	b.soa = &dns.SOA{
		Hdr:  b.hdr(b.origin, dns.TypeSOA, b.ttl),
		Ns:   "invalid.",
		Mbox: "invalid.",
		// The timers are the fallback of secondaries that miss a NOTIFY.
		Refresh: model.DefaultRefresh,
		Retry:   model.DefaultRetry,
		Expire:  model.DefaultExpire,
		Minttl:  model.DefaultMinimum,
	}
	b.add(&rrset{src: c.Src, owner: b.origin, typ: dns.TypeNS, entries: []entry{{rr: &dns.NS{Hdr: b.hdr(b.origin, dns.TypeNS, b.ttl), Ns: "invalid."}}}})
	version := "version." + b.origin
	b.add(&rrset{src: c.Src, owner: version, typ: dns.TypeTXT, entries: []entry{{rr: &dns.TXT{Hdr: b.hdr(version, dns.TypeTXT, b.ttl), Txt: []string{"2"}}}}})

	type member struct {
		name string
		m    CatalogMember
	}
	var ms []member
	seen := map[string]bool{}
	for i, m := range members {
		src, field := m.Src, m.Field
		if src == (diag.Source{}) {
			src, field = c.Src, "spec"
		} else if field == "" {
			field = "spec.zoneName"
		}
		name, err := absolute(m.Zone)
		if err != nil || name == "." {
			if err == nil {
				err = fmt.Errorf("the root zone cannot be a member")
			}
			b.rs.Errorf(src, field, "cannot list member zone %d in catalog %s: %v", i, b.origin, err)
			continue
		}
		if name == b.origin {
			b.rs.Errorf(src, field, "catalog zone %s cannot list itself as a member", b.origin)
			continue
		}
		if !seen[name] {
			seen[name] = true
			ms = append(ms, member{name, CatalogMember{Zone: name, Src: src, Field: field}})
		}
	}
	sort.Slice(ms, func(i, j int) bool {
		return compareNameKeys(newNameKey(ms[i].name), newNameKey(ms[j].name)) < 0
	})
	ids := map[string]string{}
	for _, m := range ms {
		id := MemberID(m.name)
		if other, ok := ids[id]; ok {
			b.rs.Errorf(m.m.Src, m.m.Field, "member zones %s and %s have the same catalog id %s: rename one", other, m.name, id)
			continue
		}
		ids[id] = m.name
		owner := id + ".zones." + b.origin
		if _, err := canonical(owner); err != nil {
			b.rs.Errorf(m.m.Src, m.m.Field, "cannot list member zone %s: catalog zone name %s is too long for its member records", m.name, b.origin)
			continue
		}
		b.add(&rrset{src: m.m.Src, field: m.m.Field, nameField: m.m.Field, owner: owner, typ: dns.TypePTR,
			entries: []entry{{rr: &dns.PTR{Hdr: b.hdr(owner, dns.TypePTR, b.ttl), Ptr: m.name}, field: m.m.Field}}})
	}
	return b.finish()
}

// MemberID is the catalog label of a member zone: the first 16 hex digits
// of the SHA-1 of its canonical (lower-case) wire name.
func MemberID(zone string) string {
	buf := make([]byte, 256)
	off, err := dns.PackDomainName(dns.CanonicalName(zone), buf, 0, nil, false)
	if err != nil {
		buf, off = []byte(dns.CanonicalName(zone)), len(dns.CanonicalName(zone))
	}
	sum := sha1.Sum(buf[:off])
	return hex.EncodeToString(sum[:])[:16]
}

// ViewCatalog builds the catalog zone of a view: every zone of the view that
// is a catalog member. It returns nil and no results when the view has no
// catalog.
func ViewCatalog(v *model.View) (*Zone, diag.Results) {
	if v.Catalog == nil {
		return nil, nil
	}
	var members []CatalogMember
	for _, z := range v.Zones {
		if z.CatalogMember {
			members = append(members, CatalogMember{Zone: z.Name})
		}
	}
	return Catalog(v.Catalog, members)
}
