package render

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// withOtherSigners is a signed zone built with the DNSKEY records of its
// other signers (RFC 8901 multi-signer model 2): in the zone file BIND
// 9.20 signs, they join the zone's DNSKEY RRset beside its own keys, so a
// resolver that holds either signer's DNSKEY RRset validates the other's
// signatures. BIND 9.18 drops DNSKEY records from a signed zone's file (it
// serves only its own keys; seen on 9.18.49), so a 9.18 cluster is
// refused. The TTL is the policy's dnskey-ttl, which named gives its own.
func (zs *zoneSet) withOtherSigners(c *model.Cluster, z *model.Zone, built *zonefile.Zone) *zonefile.Zone {
	if rel, _ := c.BINDRelease(); rel == model.BIND918 {
		zs.rs.Errorf(z.Src, "spec.dnssecOtherSigners", "cannot serve other signers' DNSKEYs in zone %q on BindCluster %q: its image %q runs BIND 9.18, which drops DNSKEY records from a signed zone's file; run BIND 9.20 (spec.image), or remove dnssecOtherSigners", bare(z.Name), c.Name, c.Spec.Image)
		return built
	}
	if z.DNSSEC == nil {
		return built
	}
	ttl := uint32(z.DNSSEC.DurationSeconds("dnskey-ttl"))
	var add []dns.RR
	for _, k := range z.OtherSigners {
		rr := *k
		rr.Hdr = dns.RR_Header{Name: z.Name, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: ttl}
		add = append(add, &rr)
	}
	return built.With(add)
}

// otherSignerDS are the DS records of a zone's other signers' KSKs, with
// the digests of the zone's own (SHA-256, and SHA-384 when listed).
func otherSignerDS(z *model.Zone, digests []uint8, ttl uint32) []dns.RR {
	var out []dns.RR
	for _, k := range z.OtherSigners {
		if k.Flags&dns.SEP == 0 {
			continue
		}
		for _, d := range digests {
			ds := k.ToDS(d)
			if ds == nil {
				continue
			}
			ds.Hdr.Ttl = ttl
			out = append(out, ds)
		}
	}
	return out
}

// otherSignerDSLines are ds.txt's lines for a zone's other signers' KSKs.
func otherSignerDSLines(z *model.Zone) []string {
	var out []string
	for _, rr := range otherSignerDS(z, []uint8{dns.SHA256}, 3600) {
		d := rr.(*dns.DS)
		out = append(out, fmt.Sprintf("%s %d IN DS %d %d %d %s", d.Hdr.Name, d.Hdr.Ttl, d.KeyTag, d.Algorithm, d.DigestType, strings.ToUpper(d.Digest)))
	}
	return out
}
