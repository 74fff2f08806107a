package validate

import (
	"strings"

	"github.com/miekg/dns"

	v1alpha1 "git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// xfrRequestBuffer is the size of the buffer BIND 9.18 renders a zone's SOA
// query and transfer request into: a request that does not fit is never
// sent ("connected but unable to send: ran out of space"), and the zone
// never reaches the secondaries (differential case
// long-names-axfr-request-too-big).
const xfrRequestBuffer = 512

// xfrRequestSize is the size of a TSIG-signed SOA query or AXFR request for
// zone with key: header, question, and the TSIG record with its MAC (as
// long as the algorithm's digest).
func xfrRequestSize(zone string, key *model.Key) int {
	alg := dns.Fqdn(key.Algorithm)
	if key.Algorithm == "hmac-md5" {
		alg = dns.HmacMD5 // its TSIG name is hmac-md5.sig-alg.reg.int.
	}
	mac := 64 // the largest digest
	if a, ok := vocab.TSIGByName(key.Algorithm); ok {
		mac = a.Size
	}
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	m.Extra = append(m.Extra, &dns.TSIG{
		Hdr:       dns.RR_Header{Name: dns.Fqdn(key.KeyName), Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
		Algorithm: alg,
		MACSize:   uint16(mac),
		MAC:       strings.Repeat("00", mac),
	})
	return m.Len()
}

// checkTransferRequestSize: the secondaries ask for every zone of a view
// with the view's transfer key; a long key name and a long zone name
// together make a request BIND cannot send.
func checkTransferRequestSize(c *model.Cluster) diag.Results {
	var rs diag.Results
	if c.Spec.Replicas < 2 {
		return rs
	}
	for _, v := range c.Views {
		if v.TransferKey == nil {
			continue
		}
		if cat := v.Catalog; cat != nil {
			if n := xfrRequestSize(cat.ZoneName, v.TransferKey); n > xfrRequestBuffer {
				rs.Errorf(cat.Src, "spec.zoneName", "cannot replicate catalog zone %q with transfer key %q: the signed transfer request would be %d bytes, and BIND sends none over %d (\"ran out of space\"); shorten the key's keyName or the zone name", strings.TrimSuffix(cat.ZoneName, "."), v.TransferKey.KeyName, n, xfrRequestBuffer)
			}
		}
		for _, z := range v.Zones {
			if z.Spec.Type != v1alpha1.ZonePrimary {
				continue
			}
			if n := xfrRequestSize(z.Name, v.TransferKey); n > xfrRequestBuffer {
				rs.Errorf(z.Src, "spec.zoneName", "cannot replicate zone %q with transfer key %q: the signed transfer request would be %d bytes, and BIND sends none over %d (\"ran out of space\"), so the secondaries would never get the zone; shorten the key's keyName or the zone name", strings.TrimSuffix(z.Name, "."), v.TransferKey.KeyName, n, xfrRequestBuffer)
			}
		}
	}
	return rs
}
