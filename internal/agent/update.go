package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
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
	// the type is the last word: an owner may hold an escaped blank ("sp\\ ace")
	i := strings.LastIndexByte(s, ' ')
	ok := i > 0
	name, typ := s[:max(i, 0)], s[i+1:]
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
	zp := dns.NewZoneParser(bytes.NewReader(ipseckeyLines([]byte(strings.Join(records, "\n")+"\n"))), origin, "dynamicZones["+zone+"].records")
	zp.SetDefaultTTL(300)
	var errs []string
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		h := rr.Header()
		h.Name = canonicalOwner(h.Name)
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

// ipseckeyLines puts a blank line after every line naming IPSECKEY:
// miekg/dns (v1.1.73) reads an IPSECKEY's public key to the end of its line
// and then one token more, so the record after it failed as "garbage after
// rdata" and the zone never converged (the agent differential, seed 10001).
// A blank line is nothing to a zone file, inside parentheses too; line
// numbers in errors after such a line are one higher per IPSECKEY line.
func ipseckeyLines(text []byte) []byte {
	if !bytes.Contains(bytes.ToUpper(text), []byte("IPSECKEY")) {
		return text
	}
	var out []byte
	for _, l := range bytes.SplitAfter(text, []byte("\n")) {
		out = append(out, l...)
		if bytes.Contains(bytes.ToUpper(l), []byte("IPSECKEY")) && bytes.HasSuffix(l, []byte("\n")) {
			out = append(out, '\n')
		}
	}
	return out
}

// zoneFileRRsets are the desired RRsets of a rendered zone file: every
// record but the SOA and the apex NS, which the rendered zone owns.
func zoneFileRRsets(zone, file string, text []byte) (map[RRsetKey][]dns.RR, error) {
	origin := dns.Fqdn(strings.ToLower(zone))
	out := map[RRsetKey][]dns.RR{}
	zp := dns.NewZoneParser(bytes.NewReader(ipseckeyLines(text)), origin, file)
	var errs []string
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		h := rr.Header()
		h.Name = canonicalOwner(h.Name)
		switch {
		case h.Rrtype == dns.TypeSOA, h.Name == origin && h.Rrtype == dns.TypeNS:
			continue
		case !dns.IsSubDomain(origin, h.Name):
			errs = append(errs, fmt.Sprintf("%s is outside zone %s", h.Name, origin))
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
// RFC 2136 UPDATEs. One pass per zone: one TCP connection, the zone read in
// one AXFR (signed with the update key), the desired RRsets compared with it
// in canonical wire form, and every changed RRset replaced (delete RRset +
// add) in as few UPDATE messages as fit in MaxMessage. It remembers which
// RRsets it wrote (StateFile) so it can remove the ones no longer desired,
// and leaves every other RRset alone. A pass over a zone whose SOA serial
// and records are those of the last converged pass is one SOA query.
type Converger struct {
	Addr      string // the local server, host:port
	StateFile string
	Timeout   time.Duration
	// MaxMessage bounds an UPDATE message before its TSIG (0: maxUpdateMessage).
	MaxMessage int

	memo  map[string]*zoneMemo // by zone id; the agent's loop is its only user
	saved []byte               // the state file as this Converger last wrote it
}

// maxUpdateMessage keeps an UPDATE, with its TSIG, inside the 65,535 bytes
// of a DNS message over TCP.
const maxUpdateMessage = 64000

// zoneMemo is what the last pass over a zone learned.
type zoneMemo struct {
	// serial and records are set when the pass found the zone converged:
	// the zone's SOA serial then, and a digest of the desired records.
	serial    uint32
	records   [sha256.Size]byte
	rrsets    int
	converged bool
	// sent are the RRsets BIND accepted an UPDATE for, by their form: one
	// that still differs afterwards is data BIND does not keep as written,
	// reported, not sent again every pass.
	sent map[RRsetKey]string
}

// ConvergeResult counts what one pass did.
type ConvergeResult struct {
	Updated, Removed, Unchanged int
	// Messages are the UPDATE messages sent, Transfers the zones read by AXFR.
	Messages, Transfers int
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
	if c.memo == nil {
		c.memo = map[string]*zoneMemo{}
	}
	var errs []error
	for _, z := range zones {
		id := z.View + "/" + dns.Fqdn(strings.ToLower(z.Zone))
		owned, err := c.zone(ctx, id, z, state[id], &res)
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

// op is one RRset change: a replace, or (rrs nil) a delete.
type op struct {
	key    RRsetKey
	rrs    []dns.RR
	form   string // the desired form's digest
	remove bool
}

// zone converges one zone and returns the RRsets it owns afterwards.
func (c *Converger) zone(ctx context.Context, id string, z layout.DynamicZone, owned []string, res *ConvergeResult) ([]string, error) {
	b, err := os.ReadFile(z.KeyFile)
	if err != nil {
		return owned, fmt.Errorf("cannot read update key: %w", err)
	}
	key, err := FindKey(string(b), z.KeyName)
	if err != nil {
		return owned, fmt.Errorf("cannot read update key from %s: %w", z.KeyFile, err)
	}
	p, err := newTSIG(key)
	if err != nil {
		return owned, err
	}
	zone := dns.Fqdn(strings.ToLower(z.Zone))
	var text []byte
	if z.Source != "" {
		if text, err = ReadZoneText(z.Source); err != nil {
			return owned, fmt.Errorf("cannot read desired records: %w", err)
		}
	} else {
		text = []byte(strings.Join(z.Records, "\n"))
	}
	digest := sha256.Sum256(append([]byte(z.KeyName+"\n"+z.Source+"\n"), text...))
	cl := &client{addr: c.Addr, tsig: p, timeout: c.Timeout}
	defer cl.close()

	// The same records, converged at the serial the zone still has: done,
	// without parsing them or reading the zone.
	memo := c.memo[id]
	if memo != nil && memo.converged && memo.records == digest && len(owned) == memo.rrsets {
		if serial, err := cl.serial(ctx, zone); err == nil && serial == memo.serial {
			res.Unchanged += memo.rrsets
			return owned, nil
		}
	}
	var desired map[RRsetKey][]dns.RR
	var derr error
	if z.Source != "" {
		desired, derr = zoneFileRRsets(z.Zone, z.Source, text)
	} else {
		desired, derr = DesiredRRsets(z.Zone, z.Records)
	}
	cur, serial, err := cl.axfr(ctx, zone)
	full := err == nil
	switch {
	case full:
		res.Transfers++
	case !errors.Is(err, errNoTransfer):
		return owned, err
	}

	var errs []error
	if derr != nil {
		errs = append(errs, derr)
	}
	next := &zoneMemo{sent: map[RRsetKey]string{}}
	keep := map[string]bool{}
	keys := make([]RRsetKey, 0, len(desired))
	for k := range desired {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	var ops []op
	for _, k := range keys {
		keep[k.String()] = true // owned from the first attempt, so a removal later is ours to do
		have := cur[k]
		if !full {
			if have, err = cl.query(ctx, zone, k); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if sameRRset(have, desired[k]) {
			res.Unchanged++
			continue
		}
		f, err := formOf(desired[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("cannot update %s: %w", k, err))
			continue
		}
		if memo != nil && memo.sent[k] == f.digest() {
			next.sent[k] = f.digest()
			errs = append(errs, notKept(k, have, full))
			continue
		}
		ops = append(ops, op{key: k, rrs: desired[k], form: f.digest()})
	}
	removed := map[RRsetKey]bool{}
	for _, s := range owned {
		if keep[s] {
			continue
		}
		k, err := parseRRsetKey(s)
		if err != nil || (k.Name == zone && k.Type == dns.TypeNS) || k.Type == dns.TypeSOA {
			continue // never touch the apex NS or the SOA, whatever the state file says
		}
		if full && len(cur[k]) == 0 {
			continue // already gone
		}
		ops = append(ops, op{key: k, remove: true})
		removed[k] = true
	}
	if full {
		for _, k := range cnameConflicts(desired, cur) {
			if !removed[k] {
				ops = append(ops, op{key: k, remove: true})
			}
		}
	}

	max := c.MaxMessage
	if max <= 0 {
		max = maxUpdateMessage
	}
	failed := cl.apply(ctx, zone, ops, max, res)
	for _, o := range ops {
		ferr, bad := failed[o.key]
		switch {
		case bad:
			errs = append(errs, ferr)
			if o.remove {
				keep[o.key.String()] = true // try again next pass
			}
		case o.remove:
			res.Removed++
		default:
			res.Updated++
			next.sent[o.key] = o.form
		}
	}
	if full && len(ops) == 0 && len(errs) == 0 {
		next.serial, next.records, next.rrsets, next.converged = serial, digest, len(desired), true
	}
	c.memo[id] = next

	out := make([]string, 0, len(keep))
	for s := range keep {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, errors.Join(errs...)
}

// cnameConflicts are the RRsets the zone holds (cur) that keep a desired
// RRset from being served, whoever wrote them: other data at a name that
// is to hold a CNAME, a CNAME at a name that is to hold other data (BIND
// drops such an add in silence, RFC 2136 3.4.2.2). They go in the message
// that adds the desired RRset, before it (client.apply). The DNSSEC records
// BIND keeps beside a CNAME (RRSIG, NSEC, its private signing state) stay.
func cnameConflicts(desired, cur map[RRsetKey][]dns.RR) []RRsetKey {
	cname := map[string]bool{} // name -> a CNAME is desired there
	other := map[string]bool{} // name -> other data is desired there
	for k := range desired {
		if k.Type == dns.TypeCNAME {
			cname[k.Name] = true
		} else {
			other[k.Name] = true
		}
	}
	var out []RRsetKey
	for k := range cur {
		if _, ok := desired[k]; ok {
			continue
		}
		switch k.Type {
		case dns.TypeRRSIG, dns.TypeNSEC, dns.TypeNSEC3, dns.TypeSOA, 65534:
			continue
		case dns.TypeCNAME:
			if other[k.Name] {
				out = append(out, k)
			}
		default:
			if cname[k.Name] {
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// notKept is the error for an RRset BIND accepted an UPDATE for and then
// did not serve as sent: it is not sent again until it changes.
func notKept(k RRsetKey, have []dns.RR, full bool) error {
	served := "nothing"
	if len(have) > 0 {
		var s []string
		for _, rr := range have {
			s = append(s, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
		served = strings.Join(s, ", ")
	}
	how := ""
	if !full {
		how = " (read by query: the update key may not transfer the zone, set spec.updateKeyTransfer)"
	}
	return fmt.Errorf("cannot converge %s: BIND accepted its UPDATE but serves %s%s; BIND does not keep it as written (a CNAME beside other data, data under another zone's cut); not sent again until the record changes", k, served, how)
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
	b = append(b, '\n')
	if bytes.Equal(b, c.saved) {
		return nil // a pass that changed nothing writes nothing
	}
	if _, err = WriteFileAtomic(c.StateFile, b, 0o644); err != nil {
		return err
	}
	c.saved = b
	return nil
}
