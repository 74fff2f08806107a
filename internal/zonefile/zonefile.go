// Package zonefile builds BIND zone files from the resolved model: ordinary
// zones (Build), RFC 9432 catalog zones (Catalog) and response policy zones
// (Policy). Every record is a miekg/dns RR before it is text; user values go
// through the real parser one at a time (plain forms of the common types
// through fastValue, held equal to it by tests) and must come out as
// exactly one RR of the declared type. Output is sorted in RFC 4034
// canonical order, so the same input in any order gives the same bytes, and
// it carries a content hash that ignores the SOA serial, from which
// NextSerial decides whether the serial must move.
package zonefile

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"github.com/miekg/dns"
)

// State is what survives between renders for one zone: its last serial and
// content hash.
type State struct {
	Serial uint32
	Hash   string
}

// Zone is a built zone: its RRs (without SOA) sorted canonically, and its
// content hash.
type Zone struct {
	// Origin is the zone name, canonical with a trailing dot.
	Origin string
	// TTL is the zone's $TTL.
	TTL uint32
	// SOA has serial 0; Text sets the real one.
	SOA *dns.SOA
	// RRs are every other record, apex NS included, in canonical order.
	RRs []dns.RR
	// Hash is the hex SHA-256 of the zone's text with serial 0 (Text(0)).
	Hash string
	// lines are RRs printed, one per RR, as sorting made them (printing is
	// the dominant cost of a large zone: done once, used by the hash and
	// Text). Nil, or stale in length, makes Text print RRs itself.
	lines []string
}

// NextSerial is the SOA serial of a zone whose content hash is hash: an
// explicit serial (spec.soa.serial) wins; without a previous render it is 1;
// with unchanged content the previous serial stays; otherwise it is the
// previous serial plus one in RFC 1982 arithmetic, skipping 0 on wrap.
func NextSerial(prev *State, hash string, explicit *uint32) uint32 {
	switch {
	case explicit != nil:
		return *explicit
	case prev == nil:
		return 1
	case prev.Hash == hash && prev.Serial != 0:
		return prev.Serial
	}
	if n := prev.Serial + 1; n != 0 {
		return n
	}
	return 1
}

// Text is the zone file: $ORIGIN, $TTL, the SOA with serial, then the RRs,
// each printed by miekg/dns on its own line, its fields separated by single
// spaces instead of miekg's tabs. Without a tab (miekg escapes one inside a
// name or a character-string) a YAML writer keeps the file as a literal
// block, one zone line per YAML line: a change to one zone is a diff of its
// own lines, which git merges beside a change to the zone next to it
// (docs/state.md). The SOA line ends in a comment with the content hash
// (HashComment): the state this serial stands for, which two branches that
// changed one zone differently write differently, so git makes them
// conflict there instead of merging two contents under one serial.
func (z *Zone) Text(serial uint32) []byte {
	var b bytes.Buffer
	head := z.header(serial, z.Hash)
	n := len(head)
	z.eachLine(func(l string) { n += len(l) + 1 })
	b.Grow(n)
	b.Write(head)
	z.eachLine(func(l string) {
		b.WriteString(l)
		b.WriteByte('\n')
	})
	out := b.Bytes()
	untab(out[len(head):])
	return out
}

// HashComment starts the comment at the end of a rendered SOA line that
// holds the zone's content hash.
const HashComment = " ; content sha256:"

// header is the file's first three lines ($ORIGIN, $TTL, SOA), tabs made
// spaces, the SOA line ending in HashComment and hash unless hash is "".
func (z *Zone) header(serial uint32, hash string) []byte {
	soa := *z.SOA
	soa.Serial = serial
	var comment string
	if hash != "" {
		comment = HashComment + hash
	}
	b := []byte(fmt.Sprintf("$ORIGIN %s\n$TTL %d\n%s%s\n", z.Origin, z.TTL, soa.String(), comment))
	untab(b)
	return b
}

// eachLine calls f with every RR's line as miekg/dns prints it.
func (z *Zone) eachLine(f func(string)) {
	if len(z.lines) == len(z.RRs) {
		for _, l := range z.lines {
			f(l)
		}
		return
	}
	for _, rr := range z.RRs {
		f(rr.String())
	}
}

// untab replaces every tab in b with a space, in place.
func untab(b []byte) {
	for i := bytes.IndexByte(b, '\t'); i >= 0; {
		b[i] = ' '
		j := bytes.IndexByte(b[i+1:], '\t')
		if j < 0 {
			return
		}
		i += 1 + j
	}
}

// contentHash is the hex SHA-256 of Text(0): the same content hashes the
// same whatever its serial, and StateOf reads it back from the file alone.
func (z *Zone) contentHash() string {
	h := sha256.New()
	_, _ = h.Write(z.header(0, ""))
	// The lines in chunks: hashing them one Write at a time costs a copy
	// of each line to a byte slice.
	buf := make([]byte, 0, 4<<10)
	z.eachLine(func(l string) {
		if len(buf)+len(l)+1 > cap(buf) {
			untab(buf)
			_, _ = h.Write(buf)
			buf = buf[:0]
		}
		buf = append(buf, l...)
		buf = append(buf, '\n')
	})
	untab(buf)
	_, _ = h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// StateOf reads a zone file Text wrote ($INCLUDEd parts spliced in): its
// origin, its SOA serial and the content hash its SOA line records
// (HashComment) — the content that serial was published with, even where a
// hand-merged file holds other records. A file without the comment (an
// earlier release's, tab-separated) has its hash computed from its text,
// which gives the Hash Build computes for the same content. That the file
// itself is the state is what lets git merge the renders of two branches
// that changed two zones (docs/state.md).
func StateOf(text []byte) (origin string, st State, err error) {
	var head [3][]byte
	rest := text
	for i := range head {
		line, tail, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			return "", State{}, fmt.Errorf("line %d: the file ends before its SOA record ($ORIGIN, $TTL, SOA)", i+1)
		}
		head[i], rest = line, tail
	}
	o, ok := bytes.CutPrefix(head[0], []byte("$ORIGIN "))
	if !ok || !dns.IsFqdn(string(o)) {
		return "", State{}, fmt.Errorf("line 1: want \"$ORIGIN <zone>.\", not %q", head[0])
	}
	t, ok := bytes.CutPrefix(head[1], []byte("$TTL "))
	if !ok {
		return "", State{}, fmt.Errorf("line 2: want \"$TTL <seconds>\", not %q", head[1])
	}
	ttl, err := strconv.ParseUint(string(t), 10, 32)
	if err != nil {
		return "", State{}, fmt.Errorf("line 2: %q is not a TTL: %v", t, err)
	}
	soaLine, recorded, hasHash := bytes.Cut(head[2], []byte(HashComment))
	rr, err := dns.NewRR(string(soaLine))
	if err != nil {
		return "", State{}, fmt.Errorf("line 3: %v", err)
	}
	soa, ok := rr.(*dns.SOA)
	if !ok {
		return "", State{}, fmt.Errorf("line 3: want the SOA record, not %s", dns.TypeToString[rr.Header().Rrtype])
	}
	if hasHash {
		if len(recorded) != sha256.Size*2 || strings.Trim(string(recorded), "0123456789abcdef") != "" {
			return "", State{}, fmt.Errorf("line 3: %q is not a content hash (64 hex digits)", recorded)
		}
		return string(o), State{Serial: soa.Serial, Hash: string(recorded)}, nil
	}
	z := &Zone{Origin: string(o), TTL: uint32(ttl), SOA: soa}
	h := sha256.New()
	_, _ = h.Write(z.header(0, ""))
	if bytes.IndexByte(rest, '\t') < 0 {
		_, _ = h.Write(rest)
	} else { // an earlier release's file
		spaced := bytes.Clone(rest)
		untab(spaced)
		_, _ = h.Write(spaced)
	}
	return z.Origin, State{Serial: soa.Serial, Hash: hex.EncodeToString(h.Sum(nil))}, nil
}

// Build builds a primary zone from spec.soa, spec.nameservers, spec.records
// and its DNSRecords. On any error it returns nil and the located results.
func Build(z *model.Zone) (*Zone, diag.Results) {
	b := newBuilder(z.Src, z.Name, "spec.zoneName")
	sp := z.Spec
	b.ttl = model.DefaultTTL
	if sp.DefaultTTL != nil {
		if *sp.DefaultTTL < 0 {
			b.rs.Errorf(z.Src, "spec.defaultTTL", "defaultTTL %d is negative", *sp.DefaultTTL)
		} else {
			b.ttl = uint32(*sp.DefaultTTL)
		}
	}
	if b.origin == "" {
		return nil, b.rs
	}
	b.sets = make(map[setKey]*rrset, len(z.RRsets)+1)
	b.order = make([]*rrset, 0, len(z.RRsets)+1)

	// Apex NS from spec.nameservers.
	var ns []entry
	for i, n := range sp.Nameservers {
		f := fmt.Sprintf("spec.nameservers[%d]", i)
		name, err := qualify(n, b.origin)
		if err != nil {
			b.rs.Errorf(z.Src, f, "cannot use nameserver: %v", err)
			continue
		}
		if !b.checkWritten(z.Src, f, n, "a nameserver", true) {
			continue
		}
		ns = append(ns, entry{rr: &dns.NS{Hdr: b.hdr(b.origin, dns.TypeNS, b.ttl), Ns: name}, field: f})
	}

	soa := sp.SOA
	if soa == nil {
		soa = &v1alpha1.SOASpec{}
	}
	mname := "ns1." + b.origin
	switch {
	case soa.PrimaryNS != "":
		n, err := qualify(soa.PrimaryNS, b.origin)
		if err != nil {
			b.rs.Errorf(z.Src, "spec.soa.primaryNS", "cannot use primaryNS: %v", err)
		} else {
			b.checkWritten(z.Src, "spec.soa.primaryNS", soa.PrimaryNS, "the SOA primary nameserver", true)
		}
		mname = n
	case len(ns) > 0:
		mname = ns[0].rr.(*dns.NS).Ns
	}
	rname := defaultMailbox(b.origin)
	if soa.Email != "" {
		n, err := mailbox(soa.Email, b.origin)
		if err != nil {
			b.rs.Errorf(z.Src, "spec.soa.email", "cannot use email as the SOA RNAME: %v", err)
		} else if !strings.Contains(soa.Email, "@") {
			// A domain-form RNAME (hostmaster.example.com.) is a name
			// relative to the zone like any other; local@domain is
			// always absolute.
			b.checkWritten(z.Src, "spec.soa.email", soa.Email, "the SOA contact", false)
		}
		rname = n
	}
	b.soa = &dns.SOA{
		Hdr:     b.hdr(b.origin, dns.TypeSOA, b.ttl),
		Ns:      mname,
		Mbox:    rname,
		Refresh: b.timer(soa.Refresh, model.DefaultRefresh, "spec.soa.refresh", 1),
		Retry:   b.timer(soa.Retry, model.DefaultRetry, "spec.soa.retry", 1),
		Expire:  b.timer(soa.Expire, model.DefaultExpire, "spec.soa.expire", 1),
		Minttl:  b.timer(soa.Minimum, model.DefaultMinimum, "spec.soa.minimum", 0),
	}
	nsField := "spec.nameservers"
	if len(ns) == 0 && len(sp.Nameservers) == 0 {
		// A zone needs an NS: without nameservers it is the MNAME.
		ns = append(ns, entry{rr: &dns.NS{Hdr: b.hdr(b.origin, dns.TypeNS, b.ttl), Ns: mname}, field: nsField})
	}
	if len(ns) > 0 {
		b.add(&rrset{src: z.Src, field: nsField, nameField: nsField, typ: dns.TypeNS, owner: b.origin, entries: ns})
	}

	for _, s := range z.RRsets {
		b.addUser(s.Src, s.Field, s.Name, s.Type, s.TTL, s.Values)
	}
	return b.finish()
}

// timer is an SOA timer override or its default.
func (b *builder) timer(v *int32, def uint32, field string, min int32) uint32 {
	if v == nil {
		return def
	}
	if *v < min {
		if *v >= 0 {
			// BIND loads a 0 refresh, retry or expire; the secondaries
			// bind-fn runs beside every primary would then poll without
			// pause, never retry, or drop the zone at once.
			b.rs.Errorf(b.src, field, "%d is below the minimum of %d: BIND loads it, but the cluster's secondaries transfer by these timers (a 0 refresh polls without pause, a 0 retry never waits, a 0 expire drops the zone); leave it unset for the default %d", *v, min, def)
			return def
		}
		b.rs.Errorf(b.src, field, "%d is below the minimum of %d", *v, min)
		return def
	}
	return uint32(*v)
}

// builder collects the RRsets of one zone and checks them as a whole.
type builder struct {
	src    diag.Source
	origin string
	ttl    uint32
	soa    *dns.SOA
	rs     diag.Results
	sets   map[setKey]*rrset
	order  []*rrset
	// policy: a response policy zone, whose owners are trigger names
	// written relative to it on purpose (evil.example.com).
	policy bool
}

type setKey struct {
	owner string
	typ   uint16
}

// rrset is one RRset and where it was defined.
type rrset struct {
	src       diag.Source
	field     string // the whole definition: spec.records[3], spec, spec.rules[2]
	nameField string // its owner: spec.records[3].name; "" is field + ".name"
	owner     string
	typ       uint16
	entries   []entry
}

type entry struct {
	rr    dns.RR
	field string // the value: spec.records[3].values[1]
	// text is rr printed and rdata its RDATA part (text without the
	// header); both are filled once, by parseValue or by fill.
	text, rdata string
}

// fill prints the entry's RR once, unless parseValue already did.
func (e *entry) fill() {
	if e.text == "" {
		e.text = e.rr.String()
		e.rdata = strings.TrimPrefix(e.text, e.rr.Header().String())
	}
}

// ownerField is the field of the RRset's owner name.
func (s *rrset) ownerField() string {
	if s.nameField == "" {
		return s.field + ".name"
	}
	return s.nameField
}

func (s *rrset) where() string {
	if s.field == "" {
		return s.src.Ref.String()
	}
	return s.src.Ref.String() + " " + s.field
}

// newBuilder validates the zone name; on error b.origin stays empty.
func newBuilder(src diag.Source, zone, zoneField string) *builder {
	b := &builder{src: src, sets: map[setKey]*rrset{}}
	o, err := absolute(zone)
	if err != nil {
		b.rs.Errorf(src, zoneField, "cannot use zone name: %v", err)
		return b
	}
	b.origin = o
	return b
}

func (b *builder) hdr(owner string, typ uint16, ttl uint32) dns.RR_Header {
	return dns.RR_Header{Name: owner, Rrtype: typ, Class: dns.ClassINET, Ttl: ttl}
}

// owner qualifies a record name and checks that it is inside the zone.
func (b *builder) owner(name string) (string, error) {
	o, err := qualify(name, b.origin)
	if err != nil {
		return "", err
	}
	if !inZone(o, b.origin) {
		return "", fmt.Errorf("%q is outside zone %q: use a name relative to the zone, or an absolute name ending in %q", o, b.origin, "."+strings.TrimSuffix(b.origin, ".")+".")
	}
	return o, nil
}

// addUser parses one RRset as the user wrote it (spec.records[i] or a
// DNSRecord's spec) and adds it.
func (b *builder) addUser(src diag.Source, field, name, typ string, ttl *int32, values []string) {
	ok := true
	owner, err := b.owner(name)
	if err != nil {
		b.rs.Errorf(src, field+".name", "cannot use owner name: %v", err)
		ok = false
	}
	t, tname, err := rrType(typ)
	if err != nil {
		b.rs.Errorf(src, field+".type", "%v", err)
		return
	}
	switch {
	case t == dns.TypeSOA:
		b.rs.Errorf(src, field+".type", "the SOA record is generated: set BindZone.spec.soa instead")
		return
	case !ok:
		return
	case t == dns.TypeNS && owner == b.origin:
		b.rs.Errorf(src, field+".name", "an apex NS RRset cannot be set here: BIND ignores an RRset-wide delete at a zone apex, so it could only ever grow; list the nameservers in BindZone.spec.nameservers")
		return
	case t == dns.TypeCNAME && owner == b.origin:
		b.rs.Errorf(src, field+".type", "a CNAME cannot be at the zone apex %q, which holds the SOA and NS", owner)
		return
	case t == dns.TypeDS && owner == b.origin:
		b.rs.Errorf(src, field+".type", "a DS record belongs in the parent zone, not at the apex %q", owner)
		return
	}
	// A slip in the owner is reported, and the values are still read so
	// that their problems are reported too.
	ownerOK := b.policy || b.checkOwner(src, field+".name", name, t)
	rttl := b.ttl
	if ttl != nil {
		if *ttl < 0 {
			b.rs.Errorf(src, field+".ttl", "ttl %d is negative", *ttl)
			return
		}
		rttl = uint32(*ttl)
	}
	if len(values) == 0 {
		b.rs.Errorf(src, field+".values", "an RRset needs at least one value")
		return
	}
	// A zone name that is no host name is reported on the zone, not on
	// every record in it.
	if ownerOK && ownerNeedsHostname(t) && !ownerHostOK(owner, t) && plainZoneName(b.origin) {
		b.rs.Errorf(src, field+".name", "cannot use %q as the owner of a %s record: BIND loads zones with check-names, which takes only host names here (letters, digits and inner hyphens per label); fix the name", name, tname)
		return
	}
	if ownerOK && ownerNeedsMailbox(t) && !isMailbox(owner) && plainZoneName(b.origin) {
		b.rs.Errorf(src, field+".name", "cannot use %q as the owner of a %s record: BIND loads zones with check-names, which takes a mailbox here (any first label, then a host name: letters, digits and inner hyphens per label); fix the name", name, tname)
		return
	}
	if err := checkOwnerForm(owner, t); ownerOK && err != nil && plainZoneName(b.origin) {
		b.rs.Errorf(src, field+".name", "cannot use %q as the owner: %v", name, err)
		return
	}
	set := &rrset{src: src, field: field, owner: owner, typ: t, entries: make([]entry, 0, len(values))}
	for i, v := range values {
		f := field + ".values[" + strconv.Itoa(i) + "]"
		v, err := idnValue(t, v)
		if err != nil {
			b.rs.Errorf(src, f, "cannot parse value for type %s: %v", tname, err)
			ok = false
			continue
		}
		if err := checkValueForm(t, v); err != nil {
			b.rs.Errorf(src, f, "cannot use value for type %s: %v", tname, err)
			ok = false
			continue
		}
		e, err := parseValue(owner, rttl, t, tname, v, b.origin)
		if err != nil {
			b.rs.Errorf(src, f, "cannot parse value for type %s: %v", tname, err)
			ok = false
			continue
		}
		if !b.checkValueNames(src, f, e, t, tname, v) {
			ok = false
			continue
		}
		if err := rdataNamesFit(e.rr); err != nil {
			b.rs.Errorf(src, f, "cannot use value for type %s: %v", tname, err)
			ok = false
			continue
		}
		if err := checkForm(e.rr); err != nil {
			b.rs.Errorf(src, f, "cannot use value for type %s: %v", tname, err)
			ok = false
			continue
		}
		if target, what := checkNamesTarget(e.rr); target != "" && !IsHostname(target, false) && (!inZone(target, b.origin) || plainZoneName(b.origin)) {
			b.rs.Errorf(src, f, "cannot use %q as %s: BIND loads zones with check-names, which takes only host names here (letters, digits and inner hyphens per label); fix the name", target, what)
			ok = false
			continue
		}
		e.field = f
		set.entries = append(set.entries, e)
		if t == dns.TypeTXT || t == dns.TypeSPF {
			if n, unquoted := unquotedWords(v); unquoted && n > 1 {
				b.rs.Warnf(src, f, "%q is unquoted, so its words become %d separate strings that SPF and DKIM readers join without spaces; quote it (%q) if it is one text", v, n, `"`+v+`"`)
			}
		}
	}
	if ok && ownerOK {
		b.add(set)
	}
}

// add records an RRset; the same owner and type twice is an error that
// names the first definition.
func (b *builder) add(s *rrset) {
	k := setKey{s.owner, s.typ}
	if first := b.sets[k]; first != nil {
		b.rs.Errorf(s.src, s.field, "RRset %s %s is already defined by %s: one definition per name and type; merge the values there", s.owner, dns.Type(s.typ), first.where())
		return
	}
	b.sets[k] = s
	b.order = append(b.order, s)
}

// finish dedups, checks the zone as a whole and sorts it.
func (b *builder) finish() (*Zone, diag.Results) {
	byOwner := make(map[string][]*rrset, len(b.order))
	n := 0
	for _, s := range b.order {
		for i := range s.entries {
			s.entries[i].fill()
		}
		s.entries = dedup(s.entries)
		n += len(s.entries)
		byOwner[s.owner] = append(byOwner[s.owner], s)
	}
	for _, s := range b.order {
		b.checkSet(s, byOwner[s.owner])
		b.checkSetSize(s)
	}
	b.checkZoneForms()
	if b.rs.HasErrors() {
		return nil, b.rs
	}
	es := make([]*entry, 0, n)
	for _, s := range b.order {
		for i := range s.entries {
			es = append(es, &s.entries[i])
		}
	}
	rrs, lines := sortCanonical(es)
	z := &Zone{Origin: b.origin, TTL: b.ttl, SOA: b.soa, RRs: rrs, lines: lines}
	z.Hash = z.contentHash()
	return z, b.rs
}

// checkSet checks one RRset against the others at its owner and the zone.
func (b *builder) checkSet(s *rrset, atOwner []*rrset) {
	for _, e := range s.entries[1:] {
		if e.rr.Header().Ttl != s.entries[0].rr.Header().Ttl {
			b.rs.Errorf(s.src, e.field, "TTL %d differs from %d of the other records of RRset %s %s: one RRset has one TTL", e.rr.Header().Ttl, s.entries[0].rr.Header().Ttl, s.owner, dns.Type(s.typ))
		}
	}
	switch s.typ {
	case dns.TypeCNAME, dns.TypeDNAME, dns.TypeRESINFO: // BIND's singleton types
		if len(s.entries) > 1 {
			b.rs.Errorf(s.src, s.entries[1].field, "a %s RRset holds exactly one value", dns.Type(s.typ))
		}
	}
	if s.typ == dns.TypeCNAME {
		for _, o := range atOwner {
			// BIND 9.18 and 9.20 (cname_and_other) take KEY, SIG, NSEC
			// and RRSIG next to a CNAME (RFC 2535, RFC 3007).
			if o == s || o.typ == dns.TypeRRSIG || o.typ == dns.TypeNSEC || o.typ == dns.TypeKEY || o.typ == dns.TypeSIG {
				continue
			}
			b.rs.Errorf(s.src, s.ownerField(), "a CNAME at %s cannot share its name with other data, but %s defines %s there: remove one of them", s.owner, o.where(), dns.Type(o.typ))
		}
	}
	if s.typ == dns.TypeNS {
		for _, e := range s.entries {
			target := dns.CanonicalName(e.rr.(*dns.NS).Ns)
			if !inZone(target, b.origin) || b.sets[setKey{target, dns.TypeA}] != nil || b.sets[setKey{target, dns.TypeAAAA}] != nil {
				continue
			}
			switch {
			case s.owner != b.origin:
				// BIND loads a delegation without glue, but nobody can follow it.
				b.rs.Warnf(s.src, e.field, "nameserver %s of delegation %s is inside zone %s but has no A or AAAA record (glue): resolvers cannot reach it; add its address", target, s.owner, b.origin)
			case e.field == "spec.nameservers":
				b.rs.Errorf(s.src, e.field, "the zone has no nameservers, so its NS is the SOA MNAME %s, which is inside the zone and has no A or AAAA record: list the nameservers in spec.nameservers, or add an address record for %s", target, target)
			default:
				b.rs.Errorf(s.src, e.field, "nameserver %s is inside zone %s but has no A or AAAA record, so BIND refuses to load the zone: add its address", target, b.origin)
			}
		}
	}
}

// dedup drops RRs identical to an earlier one (case-insensitive names, TTL
// aside). It sorts by RDATA text first so the RR kept does not depend on
// input order. Only RRs whose RDATA texts match case-insensitively can be
// duplicates, so dns.IsDuplicate runs within those buckets only.
func dedup(es []entry) []entry {
	if len(es) == 1 {
		return es
	}
	sort.SliceStable(es, func(i, j int) bool { return es[i].rdata < es[j].rdata })
	out := es[:0:0]
	kept := map[string][]dns.RR{}
	for _, e := range es {
		k := strings.ToLower(e.rdata)
		dup := false
		for _, o := range kept[k] {
			if dns.IsDuplicate(o, e.rr) && (namesFoldCase[e.rr.Header().Rrtype] || sameWire(o, e.rr)) {
				dup = true
				break
			}
		}
		if !dup {
			kept[k] = append(kept[k], e.rr)
			out = append(out, e)
		}
	}
	return out
}

// namesFoldCase are the types whose RDATA BIND compares with the names in
// it case-folded (their compare_* functions use dns_name_rdatacompare);
// every other type BIND compares as wire octets, so two records whose
// names differ only in case (a HIP's rendezvous servers, an SVCB target)
// are two records, both served (ISC system test checkconf/check-dup-records.db).
// (A6, which BIND folds too, reaches here only as TYPE38 generic RDATA.)
var namesFoldCase = map[uint16]bool{
	dns.TypeAFSDB: true, dns.TypeCNAME: true, dns.TypeDNAME: true, dns.TypeMB: true, dns.TypeMD: true,
	dns.TypeMF: true, dns.TypeMG: true, dns.TypeMINFO: true, dns.TypeMR: true, dns.TypeMX: true,
	dns.TypeNAPTR: true, dns.TypeNS: true, dns.TypeNXT: true, dns.TypePTR: true, dns.TypeRP: true,
	dns.TypeRRSIG: true, dns.TypeRT: true, dns.TypeSIG: true, dns.TypeSOA: true, dns.TypeTKEY: true,
	dns.TypeKX: true, dns.TypeNSAPPTR: true, dns.TypePX: true, dns.TypeSRV: true,
}

// sameWire reports whether a and b have the same RDATA octets, names in
// them as written (uncompressed, case kept).
func sameWire(a, b dns.RR) bool {
	pack := func(rr dns.RR) []byte {
		c := dns.Copy(rr)
		c.Header().Name = "."
		buf := make([]byte, dns.Len(c)+1)
		n, err := dns.PackRR(c, buf, 0, nil, false)
		if err != nil {
			return nil
		}
		return buf[:n]
	}
	pa, pb := pack(a), pack(b)
	return pa != nil && string(pa) == string(pb)
}

// sortCanonical sorts RRs by owner in RFC 4034 §6.1 canonical order, then
// type number, then RDATA text, and returns them with their printed lines,
// one per RR. Every entry must be filled (entry.fill): each RR is printed
// once.
func sortCanonical(es []*entry) ([]dns.RR, []string) {
	// RRs share owners: the distinct owner names are sorted once, and each
	// RR carries its owner's rank (names with equal keys share a rank).
	type owner struct {
		name nameKey
		rank int
	}
	owners := make(map[string]*owner, len(es))
	distinct := make([]*owner, 0, len(es))
	for _, e := range es {
		n := e.rr.Header().Name
		if owners[n] == nil {
			o := &owner{name: newNameKey(n)}
			owners[n] = o
			distinct = append(distinct, o)
		}
	}
	slices.SortFunc(distinct, func(a, b *owner) int { return compareNameKeys(a.name, b.name) })
	for i, o := range distinct {
		o.rank = i
		if i > 0 && compareNameKeys(distinct[i-1].name, o.name) == 0 {
			o.rank = distinct[i-1].rank
		}
	}
	type key struct {
		e    *entry
		rank int
		typ  uint16
		idx  int
	}
	keys := make([]key, len(es))
	for i, e := range es {
		h := e.rr.Header()
		keys[i] = key{e: e, rank: owners[h.Name].rank, typ: h.Rrtype, idx: i}
	}
	// The input index last: an unstable sort gives the stable order.
	slices.SortFunc(keys, func(a, b key) int {
		if a.rank != b.rank {
			return cmp.Compare(a.rank, b.rank)
		}
		if a.typ != b.typ {
			return cmp.Compare(a.typ, b.typ)
		}
		if c := strings.Compare(a.e.rdata, b.e.rdata); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	rrs := make([]dns.RR, len(keys))
	lines := make([]string, len(keys))
	for i := range keys {
		rrs[i] = keys[i].e.rr
		lines[i] = keys[i].e.text
	}
	return rrs, lines
}

// unquotedWords counts the character-strings of a TXT value and reports
// whether any of them is unquoted: in presentation format every word outside
// double quotes is a string of its own.
func unquotedWords(v string) (n int, unquoted bool) {
	quoted, esc, inWord := false, false, false
	for _, r := range v {
		switch {
		case esc:
			esc = false
		case r == '\\':
			esc = true
		case r == '"':
			if !quoted && !inWord {
				n++
			}
			quoted = !quoted
			inWord = quoted
			continue
		case !quoted && (r == ' ' || r == '\t'):
			inWord = false
			continue
		}
		if !quoted && !inWord {
			n++
			inWord = true
			unquoted = true
		}
	}
	return n, unquoted
}

// With is a copy of z with extra RRs (records the render adds, such as a
// signed child zone's DS) among its own, in canonical order, its hash
// computed again. z is not changed: a built zone may be cached.
func (z *Zone) With(extra []dns.RR) *Zone {
	es := make([]*entry, 0, len(z.RRs)+len(extra))
	for i, rr := range z.RRs {
		e := &entry{rr: rr}
		if len(z.lines) == len(z.RRs) {
			e.text = z.lines[i]
			e.rdata = strings.TrimPrefix(e.text, rr.Header().String())
		}
		e.fill()
		es = append(es, e)
	}
	for _, rr := range extra {
		e := &entry{rr: rr}
		e.fill()
		es = append(es, e)
	}
	rrs, lines := sortCanonical(es)
	out := &Zone{Origin: z.Origin, TTL: z.TTL, SOA: z.SOA, RRs: rrs, lines: lines}
	out.Hash = out.contentHash()
	return out
}
