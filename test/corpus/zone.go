package corpus

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// Cluster, Namespace and Zone name the converted objects.
const (
	Cluster   = "corpus"
	Namespace = "dns"
	ZoneObj   = "zone"
)

// ErrInexpressible is wrapped by conversion errors for inputs the API
// cannot hold at all (a class other than IN, a directive BIND expands).
var ErrInexpressible = fmt.Errorf("the API cannot hold it")

// line is one logical line of a zone file: its tokens as written (quotes
// and escapes kept), whether it began with white space (the owner is the
// previous one), and where it started.
type line struct {
	toks    []string
	inherit bool
	no      int
}

// lex cuts a zone file into logical lines the way BIND's master-file lexer
// does: ';' comments outside quotes, '(' ... ')' joining physical lines,
// quoted strings kept whole, backslash escapes kept as written.
func lex(data string) ([]line, error) {
	var out []line
	var cur line
	var tok strings.Builder
	inTok, quoted, depth := false, false, 0
	lineNo, start := 1, true
	flush := func() {
		if inTok {
			cur.toks = append(cur.toks, tok.String())
			tok.Reset()
			inTok = false
		}
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		if start {
			cur = line{no: lineNo, inherit: c == ' ' || c == '\t'}
			start = false
		}
		switch {
		case c == '\\' && i+1 < len(data):
			tok.WriteByte(c)
			tok.WriteByte(data[i+1])
			if data[i+1] == '\n' {
				lineNo++
			}
			i++
			inTok = true
		case quoted && c >= 0x80:
			fmt.Fprintf(&tok, "\\%03d", c)
		case quoted:
			tok.WriteByte(c)
			if c == '"' {
				quoted = false
			}
			if c == '\n' {
				return nil, fmt.Errorf("line %d: a quoted string runs over the end of the line", lineNo)
			}
		case c == '"':
			tok.WriteByte(c)
			quoted, inTok = true, true
		case c == ';':
			flush()
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case c == '(':
			flush()
			depth++
		case c == ')':
			flush()
			if depth == 0 {
				return nil, fmt.Errorf("line %d: ')' without '('", lineNo)
			}
			depth--
		case c == '\n':
			flush()
			lineNo++
			if depth == 0 {
				if len(cur.toks) > 0 {
					out = append(out, cur)
				}
				start = true
			}
		case c == ' ' || c == '\t' || c == '\r':
			flush()
		case c >= 0x80:
			// BIND reads raw octets; JSON strings are UTF-8, so the
			// package carries them as \DDD, which BIND reads alike.
			fmt.Fprintf(&tok, "\\%03d", c)
			inTok = true
		default:
			tok.WriteByte(c)
			inTok = true
		}
	}
	if quoted || depth > 0 {
		return nil, fmt.Errorf("line %d: unterminated quote or '('", lineNo)
	}
	flush()
	if !start && len(cur.toks) > 0 {
		out = append(out, cur)
	}
	return out, nil
}

// ttlValue reads a TTL as BIND does: seconds, or units (1w2d3h4m5s).
func ttlValue(s string) (uint32, bool) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n), true
	}
	var total, n uint64
	digits := false
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= '0' && c <= '9':
			n = n*10 + uint64(c-'0')
			digits = true
		case strings.ContainsRune("wdhms", c) && digits:
			total += n * map[rune]uint64{'w': 604800, 'd': 86400, 'h': 3600, 'm': 60, 's': 1}[c]
			n, digits = 0, false
		default:
			return 0, false
		}
	}
	if digits || total > 1<<32-1 {
		return 0, false
	}
	return uint32(total), true
}

func isClass(s string) bool {
	u := strings.ToUpper(s)
	return u == "IN" || u == "CH" || u == "CHAOS" || u == "HS" || u == "HESIOD" || u == "ANY" || u == "NONE" || strings.HasPrefix(u, "CLASS")
}

// rec is one record read from the file.
type rec struct {
	owner, typ, rdata string
	ttl               uint32
	no                int
}

// Zone is a converted zone file: a package of a BindCluster and a BindZone.
type Zone struct {
	Origin string
	Zone   *v1alpha1.BindZone
	// Records is the number of records carried.
	Records int
	// FromDump: converted from BIND's dump (ConvertDump), not as written.
	FromDump bool
}

// Items are the package as pipeline items.
func (z *Zone) Items() ([]model.Item, error) {
	return Items(map[string][]any{"cluster.yaml": {ClusterObj()}, "zone.yaml": {z.Zone}})
}

// WithDefaultTimers is the package with bind-fn's default SOA refresh,
// retry and expire instead of the file's (serial, MNAME, RNAME and minimum
// kept): for files whose only refusal is a timer bind-fn refuses on
// purpose, so that their records are still held to BIND's verdict.
func (z *Zone) WithDefaultTimers() *Zone {
	c := *z
	c.Zone = z.Zone.DeepCopy()
	if soa := c.Zone.Spec.SOA; soa != nil {
		soa.Refresh, soa.Retry, soa.Expire = nil, nil, nil
	}
	return &c
}

// ConvertZone converts a zone file, record by record as written, into a
// package that serves it as a primary zone. Directives the API cannot hold
// ($ORIGIN other than the zone, $INCLUDE, $GENERATE) are ErrInexpressible:
// such files are converted from BIND's dump (ConvertDump) instead.
func ConvertZone(origin, data string) (*Zone, error) {
	lines, err := lex(data)
	if err != nil {
		return nil, err
	}
	var recs []rec
	// defTTL is $TTL's; soaDef the SOA minimum, which BIND takes as the
	// default TTL when the SOA has no TTL and no $TTL came before it
	// (master.c); lastTTL the last explicit TTL (RFC 1035), used only when
	// neither is known.
	var defTTL, soaDef, lastTTL *uint32
	owner := ""
	for _, l := range lines {
		t := l.toks
		if strings.HasPrefix(t[0], "$") && !l.inherit {
			switch strings.ToUpper(t[0]) {
			case "$TTL":
				if len(t) < 2 {
					return nil, fmt.Errorf("line %d: $TTL without a value", l.no)
				}
				v, ok := ttlValue(t[1])
				if !ok {
					return nil, fmt.Errorf("line %d: $TTL %q is not a TTL", l.no, t[1])
				}
				defTTL = &v
				continue
			case "$ORIGIN":
				// The zone's own origin, in the zone name's case: relative
				// names then read alike (BIND keeps the $ORIGIN's case in
				// the names it completes, so another case is a dump's job).
				if len(t) >= 2 && dns.Fqdn(t[1]) == dns.Fqdn(origin) {
					continue
				}
			}
			return nil, fmt.Errorf("line %d: %s: %w (a directive of the file)", l.no, t[0], ErrInexpressible)
		}
		if !l.inherit {
			owner = t[0]
			t = t[1:]
		} else if owner == "" {
			return nil, fmt.Errorf("line %d: no owner: %w", l.no, ErrInexpressible)
		}
		var ttl *uint32
		for len(t) > 0 {
			if v, ok := ttlValue(t[0]); ok && ttl == nil {
				ttl = &v
				t = t[1:]
				continue
			}
			if isClass(t[0]) {
				if !strings.EqualFold(t[0], "IN") {
					return nil, fmt.Errorf("line %d: class %s: %w (records are class IN)", l.no, t[0], ErrInexpressible)
				}
				t = t[1:]
				continue
			}
			break
		}
		if len(t) == 0 {
			return nil, fmt.Errorf("line %d: no type: %w", l.no, ErrInexpressible)
		}
		r := rec{owner: owner, typ: t[0], rdata: strings.Join(t[1:], " "), no: l.no}
		switch {
		case ttl != nil:
			r.ttl = *ttl
			lastTTL = ttl
		case defTTL != nil:
			r.ttl = *defTTL
		case soaDef != nil:
			r.ttl = *soaDef
		case strings.EqualFold(r.typ, "SOA") && len(t) == 8:
			// BIND: "no TTL specified; using SOA MINTTL instead", and
			// the minimum is the default TTL from then on.
			v, _ := ttlValue(t[7])
			r.ttl = v
			soaDef = &v
		case lastTTL != nil:
			r.ttl = *lastTTL
		}
		recs = append(recs, r)
	}
	return build(origin, recs, defTTL)
}

// ConvertDump converts BIND's canonical dump (named-checkzone -D -o -):
// one record a line, every name absolute.
func ConvertDump(origin, dump string) (*Zone, error) {
	var recs []rec
	for i, l := range strings.Split(dump, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || strings.HasPrefix(l, ";") {
			continue
		}
		ttl, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("dump line %d: %q", i+1, l)
		}
		// owner ttl class type rdata: the rdata is the rest of the line as written.
		rest := l
		for j := 0; j < 4; j++ {
			rest = strings.TrimLeft(rest, " \t")
			rest = rest[strings.IndexAny(rest, " \t")+1:]
		}
		if len(f) == 4 {
			rest = ""
		}
		recs = append(recs, rec{owner: f[0], typ: f[3], rdata: strings.TrimSpace(rest), ttl: uint32(ttl), no: i + 1})
	}
	z, err := build(origin, recs, nil)
	if z != nil {
		z.FromDump = true
	}
	return z, err
}

func isApex(owner, apex string) bool {
	return owner == "@" || dns.CanonicalName(dns.Fqdn(owner)) == apex && strings.HasSuffix(owner, ".")
}

// build makes the package: the SOA becomes spec.soa, the apex NS
// spec.nameservers, every other RRset one spec.records entry (its values in
// the file's order, the TTL of its first record, as BIND does).
func build(origin string, recs []rec, defTTL *uint32) (*Zone, error) {
	apex := dns.CanonicalName(dns.Fqdn(origin))
	zone := v1alpha1.BindZone{
		TypeMeta:   metaType(v1alpha1.KindBindZone),
		ObjectMeta: meta(ZoneObj),
		Spec:       v1alpha1.BindZoneSpec{ClusterRef: Cluster, ZoneName: origin, Type: v1alpha1.ZonePrimary},
	}
	type key struct{ owner, typ string }
	idx := map[key]int{}
	soaSeen := false
	for _, r := range recs {
		typ := strings.ToUpper(r.typ)
		if typ == "SOA" && !soaSeen && isApex(r.owner, apex) {
			f := strings.Fields(r.rdata)
			if len(f) != 7 {
				return nil, fmt.Errorf("line %d: an SOA of %d fields: %w", r.no, len(f), ErrInexpressible)
			}
			soaSeen = true
			serial, err := strconv.ParseUint(f[2], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("line %d: SOA serial %q: %w", r.no, f[2], ErrInexpressible)
			}
			s32 := uint32(serial)
			soa := &v1alpha1.SOASpec{PrimaryNS: f[0], Email: f[1], Serial: &s32}
			for i, p := range []**int32{&soa.Refresh, &soa.Retry, &soa.Expire, &soa.Minimum} {
				v, ok := ttlValue(f[3+i])
				if !ok {
					return nil, fmt.Errorf("line %d: SOA timer %q: %w", r.no, f[3+i], ErrInexpressible)
				}
				x := int32(v)
				*p = &x
			}
			zone.Spec.SOA = soa
			if defTTL == nil {
				t := int32(r.ttl)
				zone.Spec.DefaultTTL = &t
			}
			continue
		}
		if typ == "NS" && isApex(r.owner, apex) {
			zone.Spec.Nameservers = append(zone.Spec.Nameservers, r.rdata)
			continue
		}
		k := key{strings.ToLower(r.owner), typ}
		if i, ok := idx[k]; ok {
			zone.Spec.Records[i].Values = append(zone.Spec.Records[i].Values, r.rdata)
			continue
		}
		ttl := int32(r.ttl)
		idx[k] = len(zone.Spec.Records)
		zone.Spec.Records = append(zone.Spec.Records, v1alpha1.Record{Name: r.owner, Type: r.typ, TTL: &ttl, Values: []string{r.rdata}})
	}
	if defTTL != nil {
		t := int32(*defTTL)
		zone.Spec.DefaultTTL = &t
	}
	return &Zone{Origin: origin, Zone: &zone, Records: len(recs)}, nil
}

// ClusterObj is the converted packages' BindCluster: one authoritative
// server.
func ClusterObj() *v1alpha1.BindCluster {
	return &v1alpha1.BindCluster{TypeMeta: metaType(v1alpha1.KindBindCluster), ObjectMeta: meta(Cluster),
		Spec: v1alpha1.BindClusterSpec{Mode: v1alpha1.ModeAuthoritative, Replicas: 1}}
}

// Items are objects as pipeline items, files in name order (cluster.yaml,
// dnssec.yaml, zone.yaml, zones.yaml), as the importer hands its package
// to the pipeline.
func Items(files map[string][]any) ([]model.Item, error) {
	return (&importer.Result{Objects: files}).Items()
}
