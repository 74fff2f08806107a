package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// RRsetKey names an RRset: lower-case FQDN owner and type ("www.example.org. A").
type RRsetKey struct {
	Name string
	Type uint16
}

func (k RRsetKey) String() string { return k.Name + " " + dns.TypeToString[k.Type] }

func parseRRsetKey(s string) (RRsetKey, error) {
	name, typ, ok := strings.Cut(s, " ")
	t, known := dns.StringToType[typ]
	if !ok || !known {
		return RRsetKey{}, fmt.Errorf("bad RRset key %q", s)
	}
	return RRsetKey{Name: name, Type: t}, nil
}

// DesiredRRsets parses a dynamic zone's records (presentation format, names
// relative to the zone or absolute) into RRsets. The apex NS and SOA are
// owned by the rendered zone, never by updates: they, and names outside the
// zone, are errors.
func DesiredRRsets(zone string, records []string) (map[RRsetKey][]dns.RR, error) {
	origin := dns.Fqdn(strings.ToLower(zone))
	out := map[RRsetKey][]dns.RR{}
	zp := dns.NewZoneParser(strings.NewReader(strings.Join(records, "\n")+"\n"), origin, "dynamicZones["+zone+"].records")
	zp.SetDefaultTTL(300)
	var errs []string
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		h := rr.Header()
		h.Name = strings.ToLower(h.Name)
		switch {
		case !dns.IsSubDomain(origin, h.Name):
			errs = append(errs, fmt.Sprintf("%s is outside zone %s", h.Name, origin))
			continue
		case h.Rrtype == dns.TypeSOA:
			errs = append(errs, fmt.Sprintf("%s SOA: the SOA is never updated by the agent", h.Name))
			continue
		case h.Name == origin && h.Rrtype == dns.TypeNS:
			errs = append(errs, fmt.Sprintf("%s NS: the apex NS is owned by BindZone.spec.nameservers, never updated by the agent", h.Name))
			continue
		}
		k := RRsetKey{Name: h.Name, Type: h.Rrtype}
		out[k] = append(out[k], rr)
	}
	if err := zp.Err(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return out, errors.New(strings.Join(errs, "; "))
	}
	return out, nil
}

// Converger converges dynamic zones on the local server with TSIG-signed
// RFC 2136 UPDATEs, one RRset replace (delete RRset + add) per changed RRset.
// It remembers which RRsets it wrote (StateFile) so it can remove the ones
// no longer desired, and leaves every other RRset alone.
type Converger struct {
	Addr      string // the local server, host:port
	StateFile string
	Timeout   time.Duration
}

// ConvergeResult counts what one pass did.
type ConvergeResult struct {
	Updated, Removed, Unchanged int
}

type zoneState map[string][]string // "<view>/<zone>" -> RRset keys owned

// Converge brings every zone to its desired RRsets. It goes on past a zone's
// error and returns all errors joined.
func (c *Converger) Converge(ctx context.Context, zones []layout.DynamicZone) (ConvergeResult, error) {
	var res ConvergeResult
	state, err := c.load()
	if err != nil {
		return res, err
	}
	var errs []error
	for _, z := range zones {
		id := z.View + "/" + dns.Fqdn(strings.ToLower(z.Zone))
		owned, err := c.zone(ctx, z, state[id], &res)
		if err != nil {
			errs = append(errs, fmt.Errorf("zone %q%s: %w", z.Zone, viewSuffix(z.View), err))
		}
		state[id] = owned
	}
	if err := c.save(state); err != nil {
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

func viewSuffix(v string) string {
	if v == "" {
		return ""
	}
	return fmt.Sprintf(" (view %q)", v)
}

// zone converges one zone and returns the RRsets it owns afterwards.
func (c *Converger) zone(ctx context.Context, z layout.DynamicZone, owned []string, res *ConvergeResult) ([]string, error) {
	b, err := os.ReadFile(z.KeyFile)
	if err != nil {
		return owned, fmt.Errorf("cannot read update key: %w", err)
	}
	key, err := FindKey(string(b), z.KeyName)
	if err != nil {
		return owned, fmt.Errorf("cannot read update key from %s: %w", z.KeyFile, err)
	}
	desired, derr := DesiredRRsets(z.Zone, z.Records)
	cl := &client{addr: c.Addr, key: key, timeout: c.Timeout, zone: dns.Fqdn(strings.ToLower(z.Zone))}
	var errs []error
	if derr != nil {
		errs = append(errs, derr)
	}
	keep := map[string]bool{}
	keys := make([]RRsetKey, 0, len(desired))
	for k := range desired {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		keep[k.String()] = true // owned from the first attempt, so a removal later is ours to do
		cur, err := cl.query(ctx, k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if sameRRset(cur, desired[k]) {
			res.Unchanged++
			continue
		}
		if err := cl.replace(ctx, k, desired[k]); err != nil {
			errs = append(errs, err)
			continue
		}
		res.Updated++
	}
	for _, s := range owned {
		if keep[s] {
			continue
		}
		k, err := parseRRsetKey(s)
		if err != nil || (k.Name == cl.zone && k.Type == dns.TypeNS) || k.Type == dns.TypeSOA {
			continue // never touch the apex NS or the SOA, whatever the state file says
		}
		if err := cl.replace(ctx, k, nil); err != nil {
			errs = append(errs, err)
			keep[s] = true // try again next pass
			continue
		}
		res.Removed++
	}
	out := make([]string, 0, len(keep))
	for s := range keep {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, errors.Join(errs...)
}

func sameRRset(a, b []dns.RR) bool {
	norm := func(rrs []dns.RR) []string {
		s := make([]string, 0, len(rrs))
		for _, rr := range rrs {
			rr = dns.Copy(rr)
			rr.Header().Name = strings.ToLower(rr.Header().Name)
			rr.Header().Class = dns.ClassINET
			s = append(s, rr.String())
		}
		sort.Strings(s)
		return s
	}
	x, y := norm(a), norm(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func (c *Converger) load() (zoneState, error) {
	st := zoneState{}
	b, err := os.ReadFile(c.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read update state: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("cannot read update state %s: %w", c.StateFile, err)
	}
	return st, nil
}

func (c *Converger) save(st zoneState) error {
	for k, v := range st {
		if len(v) == 0 {
			delete(st, k)
		}
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	_, err = WriteFileAtomic(c.StateFile, append(b, '\n'), 0o644)
	return err
}

// TSIG algorithm names as miekg/dns spells them.
var tsigAlgorithms = map[string]string{
	"hmac-md5": dns.HmacMD5, "hmac-sha1": dns.HmacSHA1, "hmac-sha224": dns.HmacSHA224,
	"hmac-sha256": dns.HmacSHA256, "hmac-sha384": dns.HmacSHA384, "hmac-sha512": dns.HmacSHA512,
}

type client struct {
	addr    string
	key     Key
	zone    string
	timeout time.Duration
}

func (c *client) exchange(ctx context.Context, m *dns.Msg) (*dns.Msg, error) {
	t := c.timeout
	if t == 0 {
		t = 5 * time.Second
	}
	name := dns.Fqdn(strings.ToLower(c.key.Name))
	alg, ok := tsigAlgorithms[strings.ToLower(c.key.Algorithm)]
	if !ok {
		return nil, fmt.Errorf("key %q: unsupported algorithm %q", c.key.Name, c.key.Algorithm)
	}
	m.SetTsig(name, alg, 300, time.Now().Unix())
	cl := &dns.Client{Net: "tcp", Timeout: t, TsigSecret: map[string]string{name: c.key.Secret}}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	r, _, err := cl.ExchangeContext(ctx, m, c.addr)
	return r, err
}

// query returns the RRset k as the server holds it (nil when absent).
func (c *client) query(ctx context.Context, k RRsetKey) ([]dns.RR, error) {
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
	if !r.Authoritative {
		return nil, fmt.Errorf("cannot query %s: the server is not authoritative for it (zone not loaded?)", k)
	}
	var out []dns.RR
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == k.Type && strings.EqualFold(rr.Header().Name, k.Name) {
			out = append(out, rr)
		}
	}
	return out, nil
}

// replace deletes RRset k and adds rrs (none: a pure delete) in one UPDATE.
func (c *client) replace(ctx context.Context, k RRsetKey, rrs []dns.RR) error {
	m := new(dns.Msg)
	m.SetUpdate(c.zone)
	m.RemoveRRset([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: k.Name, Rrtype: k.Type, Class: dns.ClassINET}}})
	if len(rrs) > 0 {
		m.Insert(rrs)
	}
	r, err := c.exchange(ctx, m)
	if err != nil {
		return fmt.Errorf("cannot update %s: %w", k, err)
	}
	if r.Rcode != dns.RcodeSuccess {
		return fmt.Errorf("cannot update %s: server answered %s", k, dns.RcodeToString[r.Rcode])
	}
	return nil
}
