package multipod

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// TSIG is a key clients sign with.
type TSIG struct {
	Name, Secret string // Secret base64
}

// q is one query's options.
type q struct {
	src  string // source address ("" = the lab's external client)
	tcp  bool
	key  *TSIG
	do   bool
	rd   bool
	wait time.Duration
}

func client(o q) *dns.Client {
	network := "udp"
	src := o.src
	if src == "" {
		src = labClient
	}
	var local net.Addr = &net.UDPAddr{IP: net.ParseIP(src)}
	if o.tcp {
		network = "tcp"
		local = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	timeout := o.wait
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	c := &dns.Client{Net: network, Timeout: timeout, Dialer: &net.Dialer{LocalAddr: local, Timeout: timeout}}
	if o.key != nil {
		c.TsigSecret = map[string]string{dns.Fqdn(o.key.Name): o.key.Secret}
	}
	return c
}

// query sends one query to server (an IP, port 53).
func query(server, name string, qtype uint16, o q) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = o.rd
	if o.do {
		m.SetEdns0(4096, true)
	}
	if o.key != nil {
		m.SetTsig(dns.Fqdn(o.key.Name), dns.HmacSHA256, 300, time.Now().Unix())
	}
	r, _, err := client(o).Exchange(m, net.JoinHostPort(server, "53"))
	if err != nil {
		return nil, err
	}
	return r, nil
}

// answers is the answer section's rdata of type qtype, sorted by the server.
func answers(r *dns.Msg, qtype uint16) []string {
	var out []string
	for _, rr := range r.Answer {
		if rr.Header().Rrtype != qtype {
			continue
		}
		f := strings.SplitN(rr.String(), "\t", 5)
		out = append(out, f[len(f)-1])
	}
	return out
}

// expect queries and checks rcode, AA and (when want != nil) the answers.
func expect(server, name string, qtype uint16, o q, rcode int, want []string) error {
	r, err := query(server, name, qtype, o)
	if err != nil {
		return fmt.Errorf("%s %s @%s: %v", name, dns.TypeToString[qtype], server, err)
	}
	if r.Rcode != rcode {
		return fmt.Errorf("%s %s @%s: rcode %s, want %s", name, dns.TypeToString[qtype], server, dns.RcodeToString[r.Rcode], dns.RcodeToString[rcode])
	}
	if want != nil {
		got := answers(r, qtype)
		if strings.Join(sorted(got), "|") != strings.Join(sorted(want), "|") {
			return fmt.Errorf("%s %s @%s: answers %q, want %q", name, dns.TypeToString[qtype], server, got, want)
		}
	}
	return nil
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// update sends a TSIG-signed UPDATE to server and returns the rcode.
func update(server, zone string, key TSIG, fn func(m *dns.Msg)) error {
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	fn(m)
	m.SetTsig(dns.Fqdn(key.Name), dns.HmacSHA256, 300, time.Now().Unix())
	r, _, err := client(q{key: &key, tcp: true, wait: 5 * time.Second}).Exchange(m, net.JoinHostPort(server, "53"))
	if err != nil {
		return err
	}
	if r.Rcode != dns.RcodeSuccess {
		return fmt.Errorf("update %s: %s", zone, dns.RcodeToString[r.Rcode])
	}
	return nil
}

func mustRR(s string) dns.RR {
	rr, err := dns.NewRR(s)
	if err != nil {
		panic(err)
	}
	return rr
}

// notify sends an unsigned NOTIFY for zone to server from src.
func notify(server, src, zone string) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetNotify(dns.Fqdn(zone))
	r, _, err := client(q{src: src}).Exchange(m, net.JoinHostPort(server, "53"))
	return r, err
}

// tcpPoller keeps one TCP connection per server open (RRL does not apply to
// TCP, and a kept connection costs no handshake per probe).
type tcpPoller struct {
	mu    sync.Mutex
	conns map[string]*dns.Conn
}

func (p *tcpPoller) exchange(server string, m *dns.Msg) (*dns.Msg, error) {
	p.mu.Lock()
	if p.conns == nil {
		p.conns = map[string]*dns.Conn{}
	}
	c := p.conns[server]
	p.mu.Unlock()
	if c == nil {
		cl := client(q{tcp: true})
		var err error
		c, err = cl.Dial(net.JoinHostPort(server, "53"))
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		p.conns[server] = c
		p.mu.Unlock()
	}
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if err := c.WriteMsg(m); err != nil {
		p.drop(server)
		return nil, err
	}
	r, err := c.ReadMsg()
	if err != nil {
		p.drop(server)
		return nil, err
	}
	return r, nil
}

func (p *tcpPoller) drop(server string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.conns[server]; c != nil {
		c.Close()
		delete(p.conns, server)
	}
}

func (p *tcpPoller) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, c := range p.conns {
		c.Close()
		delete(p.conns, k)
	}
}

// has reports whether server answers name/qtype with rdata want.
func (p *tcpPoller) has(server, name string, qtype uint16, want string) bool {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = false
	r, err := p.exchange(server, m)
	if err != nil || r.Rcode != dns.RcodeSuccess {
		return false
	}
	for _, a := range answers(r, qtype) {
		if a == want {
			return true
		}
	}
	return false
}
