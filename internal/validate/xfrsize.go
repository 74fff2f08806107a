package validate

import (
	"strings"

	v1alpha1 "git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// xfrRequestBuffer is the size of the buffer BIND 9.18 renders a zone's SOA
// query and transfer request into: a request that does not fit is never
// sent ("connected but unable to send: ran out of space"), and the zone
// never reaches the secondaries (differential case
// long-names-axfr-request-too-big).
const xfrRequestBuffer = 512

// tsigMACSize is the MAC length of each TSIG algorithm bind-fn accepts.
var tsigMACSize = map[string]int{
	"hmac-md5": 16, "hmac-sha1": 20, "hmac-sha224": 28, "hmac-sha256": 32, "hmac-sha384": 48, "hmac-sha512": 64,
}

// wireLen is the length of a domain name in wire form.
func wireLen(name string) int {
	name = strings.TrimSuffix(name, ".")
	if name == "" {
		return 1
	}
	return len(name) + 2
}

// xfrRequestSize is the size of a TSIG-signed SOA query or AXFR request for
// zone with key: header, question, and the TSIG record.
func xfrRequestSize(zone string, key *model.Key) int {
	alg := key.Algorithm
	algName := alg + "."
	if alg == "hmac-md5" {
		algName = "hmac-md5.sig-alg.reg.int."
	}
	mac, ok := tsigMACSize[alg]
	if !ok {
		mac = 64
	}
	question := wireLen(zone) + 4
	// owner, type, class, TTL, RDLENGTH; then algorithm, time (6), fudge (2),
	// MAC size (2), MAC, original id (2), error (2), other length (2).
	tsig := wireLen(key.KeyName) + 10 + wireLen(algName) + 6 + 2 + 2 + mac + 2 + 2 + 2
	return 12 + question + tsig
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
