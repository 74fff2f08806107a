package agent

import (
	"context"
	"net"
	"sort"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/agent/serversconf"
	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// Resolver looks up host addresses; *net.Resolver satisfies it (and reads
// /etc/hosts before DNS, which the multi-pod tests rely on).
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// PeerResolver resolves server lists, remembering each host's last answer:
// a host that fails to resolve keeps its previous addresses, so a DNS blip
// (or a pod being rescheduled) never empties a secondary's primaries list,
// which BIND would reject.
type PeerResolver struct {
	Resolver Resolver
	Timeout  time.Duration
	last     map[string][]net.IP
	// Errors holds the last lookup error per host (nil entries removed).
	Errors map[string]error
}

// Resolve returns the peers of every list. Lists whose role is not role are
// written empty: a pod only refers to the lists of its own role.
func (p *PeerResolver) Resolve(ctx context.Context, role Role, lists []layout.ServerList) []Peers {
	if p.last == nil {
		p.last = map[string][]net.IP{}
	}
	if p.Errors == nil {
		p.Errors = map[string]error{}
	}
	t := p.Timeout
	if t == 0 {
		t = 3 * time.Second
	}
	var out []Peers
	for _, l := range lists {
		ps := Peers{Name: l.Name, Key: l.Key, Port: l.Port, ACLOnly: l.ACLOnly, TLS: l.TLS}
		if l.Role == string(role) {
			for _, h := range l.Hosts {
				ps.IPs = append(ps.IPs, p.lookup(ctx, t, h)...)
			}
		}
		ps.IPs = serversconf.SortIPs(ps.IPs)
		out = append(out, ps)
	}
	return out
}

func (p *PeerResolver) lookup(ctx context.Context, t time.Duration, host string) []net.IP {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	addrs, err := p.Resolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		if err == nil {
			err = &net.DNSError{Err: "no addresses", Name: host}
		}
		p.Errors[host] = err
		return p.last[host]
	}
	delete(p.Errors, host)
	ips := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		if a.Zone != "" {
			continue // link-local with a zone cannot go into named.conf
		}
		ips = append(ips, a.IP)
	}
	p.last[host] = ips
	return ips
}

// MissingPeers returns the names of the lists of role that have hosts but
// no address yet, sorted.
func MissingPeers(role Role, lists []layout.ServerList, peers []Peers) []string {
	byName := map[string]Peers{}
	for _, p := range peers {
		byName[p.Name] = p
	}
	var missing []string
	for _, l := range lists {
		if l.Role == string(role) && !l.ACLOnly && len(l.Hosts) > 0 && len(byName[l.Name].IPs) == 0 {
			missing = append(missing, l.Name)
		}
	}
	sort.Strings(missing)
	return missing
}
