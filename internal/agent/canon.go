package agent

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// canonicalRdata is rr's rdata as BIND holds it, for comparison: the
// uncompressed wire form with every domain name in it in lower case (RFC
// 4034 §6.2 and DNS names' case-insensitivity). Text forms that name the
// same data (hex case, spacing, quoting, a v6 address's zeros) meet in it,
// so an RRset BIND prints differently from its input is not sent again.
func canonicalRdata(rr dns.RR) (string, error) {
	rr = dns.Copy(rr)
	h := rr.Header()
	h.Name, h.Class, h.Ttl = ".", dns.ClassINET, 0
	lowerNames(reflect.ValueOf(rr).Elem())
	buf := make([]byte, dns.Len(rr)+1)
	off, err := dns.PackRR(rr, buf, 0, nil, false)
	if err != nil {
		return "", err
	}
	// Skip the owner (the root, one byte), type, class, TTL and rdlength.
	return string(buf[1+10 : off]), nil
}

// lowerNames lower-cases every domain name field of an RR struct.
func lowerNames(v reflect.Value) {
	t := v.Type()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !strings.Contains(t.Field(i).Tag.Get("dns"), "domain-name") {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(strings.ToLower(f.String()))
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.String {
				for j := 0; j < f.Len(); j++ {
					f.Index(j).SetString(strings.ToLower(f.Index(j).String()))
				}
			}
		}
	}
}

// rrsetForm is an RRset reduced to what BIND keeps of it: its distinct
// rdata in canonical form, sorted, and its one TTL. BIND gives every RR of
// an RRset the same TTL: desired RRs with different TTLs compare by rdata
// alone (ttl -1), or they would differ on every pass.
type rrsetForm struct {
	rdata []string
	ttl   int64
}

func formOf(rrs []dns.RR) (rrsetForm, error) {
	f := rrsetForm{ttl: -1}
	for i, rr := range rrs {
		c, err := canonicalRdata(rr)
		if err != nil {
			return f, err
		}
		f.rdata = append(f.rdata, c)
		t := int64(rr.Header().Ttl)
		switch {
		case i == 0:
			f.ttl = t
		case f.ttl != t:
			f.ttl = -2 // mixed
		}
	}
	if f.ttl == -2 {
		f.ttl = -1
	}
	slices.Sort(f.rdata)
	f.rdata = slices.Compact(f.rdata)
	return f, nil
}

// sameRRset reports whether the server's RRset cur holds the desired RRset
// want, in canonical form.
func sameRRset(cur, want []dns.RR) bool {
	c, err1 := formOf(cur)
	w, err2 := formOf(want)
	if err1 != nil || err2 != nil {
		return false
	}
	if w.ttl >= 0 && c.ttl != w.ttl {
		return false
	}
	return slices.Equal(c.rdata, w.rdata)
}

// digest is one string for an RRset's form (what the agent last sent).
func (f rrsetForm) digest() string {
	return strconv.FormatInt(f.ttl, 10) + "\x00" + strings.Join(f.rdata, "\x00")
}

// canonicalOwner is an owner name in one presentation form: lower case,
// escaped as miekg/dns prints a name it unpacks from the wire. A zone file
// may escape what the wire form does not need escaped (`\$dollar`, written
// so BIND does not read a directive), and an AXFR gives `$dollar`: without
// this the agent never found the RRset it had sent (the agent
// differential, seed 10019).
func canonicalOwner(name string) string {
	buf := make([]byte, 256)
	off, err := dns.PackDomainName(name, buf, 0, nil, false)
	if err != nil {
		return strings.ToLower(name)
	}
	s, _, err := dns.UnpackDomainName(buf[:off], 0)
	if err != nil {
		return strings.ToLower(name)
	}
	return strings.ToLower(s)
}
