package verify

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
)

// notifyTargets are the addresses either server may send NOTIFY to: every
// alsoNotify address of the import, and the addresses of every imported
// zone's NS names found in the zone (notify yes sends to the NS set).
func (v *verifier) notifyTargets() []string {
	set := map[string]bool{}
	for _, o := range v.opt.Result.Objects["zones.yaml"] {
		for _, e := range o.(*v1alpha1.BindZone).Spec.AlsoNotify {
			if a, err := netip.ParseAddr(strings.Fields(e)[0]); err == nil && a.Is4() {
				set[a.String()] = true
			}
		}
	}
	for _, z := range v.opt.Result.Zones {
		ns := map[string]bool{}
		apex := dns.CanonicalName(dns.Fqdn(z.Name))
		for _, rr := range z.RRs {
			if n, ok := rr.(*dns.NS); ok && dns.CanonicalName(n.Hdr.Name) == apex {
				ns[dns.CanonicalName(n.Ns)] = true
			}
		}
		for _, rr := range z.RRs {
			if a, ok := rr.(*dns.A); ok && ns[dns.CanonicalName(a.Hdr.Name)] {
				set[a.A.String()] = true
			}
		}
	}
	for _, a := range v.opt.ListenOn { // the original's own addresses
		delete(set, a)
	}
	delete(set, origIP)
	delete(set, rendIP)
	delete(set, gateway)
	var out []string
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// listenNotify answers NOTIFY on every target address and records which
// server notified which zone to which address.
func (v *verifier) listenNotify() error {
	v.notifies = map[string]map[string][]string{}
	for _, t := range v.notifyTargets() {
		if err := addAddr(t); err != nil {
			return err
		}
		pc, err := net.ListenPacket("udp", net.JoinHostPort(t, "53"))
		if err != nil {
			return fmt.Errorf("cannot listen for NOTIFY on %s: %w", t, err)
		}
		target := t
		srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, m *dns.Msg) {
			if m.Opcode == dns.OpcodeNotify && len(m.Question) == 1 {
				from, _, _ := net.SplitHostPort(w.RemoteAddr().String())
				zone := strings.TrimSuffix(strings.ToLower(m.Question[0].Name), ".")
				v.mu.Lock()
				if v.notifies[from] == nil {
					v.notifies[from] = map[string][]string{}
				}
				if !slices.Contains(v.notifies[from][zone], target) {
					v.notifies[from][zone] = append(v.notifies[from][zone], target)
				}
				v.mu.Unlock()
			}
			r := new(dns.Msg)
			r.SetReply(m)
			r.Authoritative = true
			_ = w.WriteMsg(r)
		})}
		go func() { _ = srv.ActivateAndServe() }()
		v.conns = append(v.conns, srv)
	}
	return nil
}

// compareNotifies waits (bounded) until both servers have notified the
// same targets for every zone, then reports each difference.
func (v *verifier) compareNotifies() {
	if len(v.conns) == 0 {
		return
	}
	same := func() (bool, []string) {
		v.mu.Lock()
		defer v.mu.Unlock()
		// The original notifies from its namespace's address, or from
		// the listen-on address it answers on (notify-source).
		o, r := map[string][]string{}, v.notifies[rendIP]
		for _, src := range []string{origIP, v.orig.ip} {
			for z, ts := range v.notifies[src] {
				for _, t := range ts {
					if !slices.Contains(o[z], t) {
						o[z] = append(o[z], t)
					}
				}
			}
		}
		zones := map[string]bool{}
		for z := range o {
			zones[z] = true
		}
		for z := range r {
			zones[z] = true
		}
		var diffs []string
		for z := range zones {
			a, b := slices.Sorted(slices.Values(o[z])), slices.Sorted(slices.Values(r[z]))
			if !slices.Equal(a, b) {
				diffs = append(diffs, fmt.Sprintf("%s\x00the original NOTIFYs [%s], the rendered [%s]", z, strings.Join(a, " "), strings.Join(b, " ")))
			}
		}
		sort.Strings(diffs)
		return len(diffs) == 0 && len(zones) > 0, diffs
	}
	// BIND notifies after notify-delay (5s by default) and at
	// startup-notify-rate: the bound covers both with room.
	deadline := time.Now().Add(min(v.opt.Timeout, 30*time.Second))
	var diffs []string
	for {
		var ok bool
		ok, diffs = same()
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	v.mu.Lock()
	for _, zs := range v.notifies {
		for _, t := range zs {
			v.sum.Notifies += len(t)
		}
	}
	v.mu.Unlock()
	files := map[string]string{}
	for _, z := range v.opt.Result.Zones {
		files[strings.ToLower(z.Name)] = z.File + ":1"
	}
	for _, d := range diffs {
		z, why, _ := strings.Cut(d, "\x00")
		where := files[z]
		if where == "" {
			where = "zone " + z
		}
		v.lose(where, "NOTIFY targets of zone "+z, why)
	}
}
