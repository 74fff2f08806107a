package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// client talks to the local server for one zone's pass: every query,
// transfer and UPDATE of the pass on one TCP connection, each signed with
// the zone's update key. A connection that fails is dropped and dialled
// again once.
type client struct {
	addr    string
	tsig    *tsigProvider
	timeout time.Duration
	raw     net.Conn
}

// errNoTransfer: the server refuses the update key an AXFR of the zone.
var errNoTransfer = errors.New("the server refuses the update key a zone transfer")

func (c *client) wait() time.Duration {
	if c.timeout == 0 {
		return 5 * time.Second
	}
	return c.timeout
}

func (c *client) conn(ctx context.Context) (net.Conn, error) {
	if c.raw != nil {
		return c.raw, nil
	}
	d := net.Dialer{Timeout: c.wait()}
	raw, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return nil, err
	}
	c.raw = raw
	return raw, nil
}

func (c *client) close() {
	if c.raw != nil {
		_ = c.raw.Close()
		c.raw = nil
	}
}

// exchange sends m and reads its answer, on a fresh connection once more
// if the kept one fails (the server may close an idle one). A fresh
// dns.Conn each time: a dns.Conn folds the last request's MAC into the
// next request's signature.
func (c *client) exchange(ctx context.Context, m *dns.Msg) (*dns.Msg, error) {
	var err error
	for try := 0; try < 2; try++ {
		var raw net.Conn
		if raw, err = c.conn(ctx); err != nil {
			continue
		}
		c.tsig.sign(m)
		cl := &dns.Client{Net: "tcp", Timeout: c.wait(), TsigProvider: c.tsig}
		var r *dns.Msg
		r, _, err = cl.ExchangeWithConnContext(ctx, m, &dns.Conn{Conn: raw})
		if err == nil {
			return r, nil
		}
		c.close()
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

// serial is the zone's SOA serial as the server holds it.
func (c *client) serial(ctx context.Context, zone string) (uint32, error) {
	m := new(dns.Msg)
	m.SetQuestion(zone, dns.TypeSOA)
	m.RecursionDesired = false
	r, err := c.exchange(ctx, m)
	if err != nil {
		return 0, err
	}
	for _, rr := range r.Answer {
		if soa, ok := rr.(*dns.SOA); ok && r.Authoritative && strings.EqualFold(soa.Hdr.Name, zone) {
			return soa.Serial, nil
		}
	}
	return 0, fmt.Errorf("no SOA for %s: %s aa=%v", zone, dns.RcodeToString[r.Rcode], r.Authoritative)
}

// keepOpen is a connection a dns.Transfer cannot close: the pass goes on
// with its UPDATEs on it.
type keepOpen struct{ net.Conn }

func (keepOpen) Close() error { return nil }

// axfr reads the zone in one transfer: every RRset by key (owners in lower
// case, the SOA left out) and the SOA serial. It is the authoritative data,
// delegations and glue included, which a query answers with a referral.
func (c *client) axfr(ctx context.Context, zone string) (map[RRsetKey][]dns.RR, uint32, error) {
	raw, err := c.conn(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot transfer %s: %w", zone, err)
	}
	m := new(dns.Msg)
	m.SetAxfr(zone)
	c.tsig.sign(m)
	tr := &dns.Transfer{Conn: &dns.Conn{Conn: keepOpen{raw}}, TsigProvider: c.tsig, ReadTimeout: c.wait(), WriteTimeout: c.wait()}
	if dl, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(dl)
	}
	ch, err := tr.In(m, c.addr)
	if err != nil {
		c.close()
		return nil, 0, fmt.Errorf("cannot transfer %s: %w", zone, err)
	}
	out := map[RRsetKey][]dns.RR{}
	var serial uint32
	soas := 0
	for env := range ch {
		if err == nil && env.Error != nil {
			err = env.Error
		}
		if err != nil {
			continue // drain: the transfer closes the channel
		}
		for _, rr := range env.RR {
			h := rr.Header()
			if h.Rrtype == dns.TypeSOA {
				if soas++; soas == 1 {
					serial = rr.(*dns.SOA).Serial
				}
				continue
			}
			h.Name = canonicalOwner(h.Name)
			k := RRsetKey{Name: h.Name, Type: h.Rrtype}
			out[k] = append(out[k], rr)
		}
	}
	_ = raw.SetDeadline(time.Time{})
	if err != nil {
		for _, rc := range []int{dns.RcodeRefused, dns.RcodeNotAuth} {
			// miekg/dns reports the first message's rcode only in its text.
			if strings.Contains(err.Error(), fmt.Sprintf("bad xfr rcode: %d", rc)) {
				return nil, 0, errNoTransfer
			}
		}
		c.close()
		return nil, 0, fmt.Errorf("cannot transfer %s: %w", zone, err)
	}
	return out, serial, nil
}

// query returns the RRset k as the server holds it (nil when absent): the
// path when the update key may not transfer the zone. At or below a
// delegation the server answers with a referral, whose NS and glue are the
// zone's data there.
func (c *client) query(ctx context.Context, zone string, k RRsetKey) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetQuestion(k.Name, k.Type)
	m.RecursionDesired = false
	r, err := c.exchange(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("cannot query %s: %w", k, err)
	}
	if r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError {
		return nil, fmt.Errorf("cannot query %s: %s", k, dns.RcodeToString[r.Rcode])
	}
	pick := func(rrs []dns.RR) []dns.RR {
		var out []dns.RR
		for _, rr := range rrs {
			if rr.Header().Rrtype == k.Type && strings.EqualFold(rr.Header().Name, k.Name) {
				out = append(out, rr)
			}
		}
		return out
	}
	if r.Authoritative {
		return pick(r.Answer), nil
	}
	for _, rr := range r.Ns {
		if ns, ok := rr.(*dns.NS); ok && dns.IsSubDomain(zone, ns.Hdr.Name) && !strings.EqualFold(ns.Hdr.Name, zone) && dns.IsSubDomain(ns.Hdr.Name, k.Name) {
			return pick(append(append([]dns.RR{}, r.Ns...), r.Extra...)), nil
		}
	}
	return nil, fmt.Errorf("cannot query %s: the server is not authoritative for it (zone not loaded?)", k)
}

// apply sends ops in UPDATE messages of at most max bytes (before the
// TSIG) and returns the error of each op that failed. The ops of one owner
// name travel in one message, its deletes before its adds (nameGroups): an
// RRset replaced by one of another type (A to CNAME, CNAME to A) is one
// message, which BIND applies whole, so the name is never served with
// neither, and the add is never one BIND drops in silence (RFC 2136 3.4.2.2:
// a CNAME is not added beside other data, nor other data beside a CNAME,
// and the check sees the deletes made earlier in the same message).
// A message the server refuses is split in halves until the failing names
// are alone, so one bad RRset costs its own message, not the pass.
func (c *client) apply(ctx context.Context, zone string, ops []op, max int, res *ConvergeResult) map[RRsetKey]error {
	failed := map[RRsetKey]error{}
	var batch [][]op
	size := 0
	base := 12 + len(zone) + 2 + 4
	var down error // a transport failure: the rest is not sent
	send := func() {
		if len(batch) > 0 {
			down = c.send(ctx, zone, batch, failed, res, down)
		}
		batch, size = nil, 0
	}
	for _, g := range nameGroups(ops) {
		n := 0
		for _, o := range g {
			n += opSize(o)
		}
		if len(batch) > 0 && base+size+n > max {
			send()
		}
		batch = append(batch, g)
		size += n
	}
	send()
	return failed
}

// nameGroups cuts ops into groups of one owner name each, in the order the
// names first appear, removals before replaces within a group.
func nameGroups(ops []op) [][]op {
	at := map[string]int{}
	var out [][]op
	for _, o := range ops {
		i, ok := at[o.key.Name]
		if !ok {
			i = len(out)
			at[o.key.Name] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], o)
	}
	for _, g := range out {
		sort.SliceStable(g, func(i, j int) bool { return g[i].remove && !g[j].remove })
	}
	return out
}

// opSize is an op's uncompressed size in an UPDATE: the delete of the
// RRset and every RR added.
func opSize(o op) int {
	n := len(o.key.Name) + 1 + 10
	for _, rr := range o.rrs {
		n += dns.Len(rr)
	}
	return n
}

// updateMsg is one UPDATE of zone for groups: every delete first, then
// every add, so an add never meets data of its name that the same message
// deletes.
func updateMsg(zone string, groups [][]op) *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate(zone)
	for _, g := range groups {
		for _, o := range g {
			m.RemoveRRset([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: o.key.Name, Rrtype: o.key.Type, Class: dns.ClassINET}}})
		}
	}
	for _, g := range groups {
		for _, o := range g {
			if !o.remove {
				m.Insert(o.rrs)
			}
		}
	}
	return m
}

func (c *client) send(ctx context.Context, zone string, batch [][]op, failed map[RRsetKey]error, res *ConvergeResult, down error) error {
	fail := func(err func(op) error) {
		for _, g := range batch {
			for _, o := range g {
				failed[o.key] = err(o)
			}
		}
	}
	if down != nil {
		fail(func(o op) error { return fmt.Errorf("cannot update %s: not sent: %w", o.key, down) })
		return down
	}
	res.Messages++
	r, err := c.exchange(ctx, updateMsg(zone, batch))
	if err != nil {
		fail(func(o op) error { return fmt.Errorf("cannot update %s: %w", o.key, err) })
		return err
	}
	if r.Rcode == dns.RcodeSuccess {
		return nil
	}
	if len(batch) == 1 {
		fail(func(o op) error {
			return fmt.Errorf("cannot update %s: server answered %s", o.key, dns.RcodeToString[r.Rcode])
		})
		return nil
	}
	half := len(batch) / 2
	if down = c.send(ctx, zone, batch[:half], failed, res, nil); down != nil {
		return c.send(ctx, zone, batch[half:], failed, res, down)
	}
	return c.send(ctx, zone, batch[half:], failed, res, nil)
}
