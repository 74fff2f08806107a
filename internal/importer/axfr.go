package importer

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// TSIG is a key to sign a transfer with.
type TSIG struct {
	Name, Algorithm, Secret string
}

// ParseTSIG reads dig's -y form: [algorithm:]name:secret.
func ParseTSIG(s string) (*TSIG, error) {
	parts := strings.Split(s, ":")
	switch len(parts) {
	case 2:
		return &TSIG{Name: parts[0], Algorithm: vocab.DefaultTSIG, Secret: parts[1]}, nil
	case 3:
		return &TSIG{Algorithm: strings.ToLower(parts[0]), Name: parts[1], Secret: parts[2]}, nil
	}
	return nil, fmt.Errorf("cannot read key %q: want [algorithm:]name:secret", s)
}

// Transfer fetches a zone by AXFR from server (host or host:port).
func Transfer(server, zone string, key *TSIG, timeout time.Duration) ([]dns.RR, error) {
	return TransferFrom("", server, zone, key, timeout, timeout)
}

// TransferFrom is Transfer from the source address src ("": any), with
// its own bounds on connecting and on reading.
func TransferFrom(src, server, zone string, key *TSIG, dial, read time.Duration) ([]dns.RR, error) {
	if _, _, err := net.SplitHostPort(server); err != nil {
		server = net.JoinHostPort(server, "53")
	}
	tr := &dns.Transfer{DialTimeout: dial, ReadTimeout: read}
	if src != "" {
		d := net.Dialer{Timeout: dial, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		conn, err := d.Dial("tcp", server)
		if err != nil {
			return nil, fmt.Errorf("AXFR %s from %s: %w", zone, server, err)
		}
		defer conn.Close()
		tr.Conn = &dns.Conn{Conn: conn}
	}
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	if key != nil {
		alg := dns.HmacSHA256
		if key.Algorithm != "" {
			alg = dns.Fqdn(strings.ToLower(key.Algorithm))
		}
		tr.TsigSecret = map[string]string{dns.Fqdn(key.Name): key.Secret}
		m.SetTsig(dns.Fqdn(key.Name), alg, 300, time.Now().Unix())
	}
	env, err := tr.In(m, server)
	if err != nil {
		return nil, fmt.Errorf("AXFR %s from %s: %w", zone, server, err)
	}
	var out []dns.RR
	for e := range env {
		if e.Error != nil {
			return nil, fmt.Errorf("AXFR %s from %s: %w", zone, server, e.Error)
		}
		out = append(out, e.RR...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("AXFR %s from %s: empty transfer", zone, server)
	}
	// An AXFR ends with the SOA again.
	if len(out) > 1 {
		if _, ok := out[len(out)-1].(*dns.SOA); ok {
			out = out[:len(out)-1]
		}
	}
	return out, nil
}

// AddZone puts a transferred zone into the result: the records of an
// imported zone of that name (in view, when given) are replaced — the
// server's live content wins over a file that may lack its journal — or a
// new primary zone is added.
func (r *Result) AddZone(view, zone, source string, rrs []dns.RR) {
	name := strings.ToLower(strings.TrimSuffix(zone, "."))
	var z *v1alpha1.BindZone
	for _, o := range r.Objects["zones.yaml"] {
		bz := o.(*v1alpha1.BindZone)
		if bz.Spec.ZoneName == name && (view == "" || bz.Spec.ViewRef == view) {
			z = bz
		}
	}
	im := &importer{res: r, names: map[string]bool{}}
	if z == nil {
		c := r.cluster()
		im.opt = Options{Cluster: c.Name, Namespace: c.Namespace}
		for _, o := range r.Objects["zones.yaml"] {
			im.names["zone/"+o.(*v1alpha1.BindZone).Name] = true
		}
		z = &v1alpha1.BindZone{TypeMeta: tm(v1alpha1.KindBindZone), ObjectMeta: im.meta(im.objName("zone", name))}
		z.Spec.ClusterRef = c.Name
		z.Spec.ZoneName = name
		z.Spec.ViewRef = view
		z.Spec.Type = v1alpha1.ZonePrimary
		r.Objects["zones.yaml"] = append(r.Objects["zones.yaml"], z)
		c.Spec.Mode = v1alpha1.ModeAuthoritative
	}
	z.Spec.Records, z.Spec.Nameservers, z.Spec.SOA = nil, nil, nil
	im.zoneRecords(z, rrs, namedconf.Located{File: source})
	// The transfer replaces what the file said about this zone.
	var zones []Zone
	for _, old := range r.Zones {
		if old.Name == name && (view == "" || old.View == view) {
			continue
		}
		zones = append(zones, old)
	}
	r.Zones = append(zones, Zone{View: view, Name: name, File: source, RRs: rrs, Kind: "zone"})
	var losses []Loss
	for _, l := range r.Losses {
		if strings.Contains(l.Why, "has a journal") && strings.HasPrefix(l.Why, "zone "+name+" ") {
			continue
		}
		losses = append(losses, l)
	}
	r.Losses = losses
}
