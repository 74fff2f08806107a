package validate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// BIND's zone database limits (9.18.28 and later, 9.20): named refuses to
// load a zone with an RRset of more records, or a name with more types,
// although named-checkconf -z and named-checkzone pass it (the zone then
// SERVFAILs on every pod). extraOptions max-records-per-type and
// max-types-per-name move them; 0 lifts them.
const (
	defaultMaxRecordsPerType = 100
	defaultMaxTypesPerName   = 100
)

// zoneLimit is one of those limits as the cluster sets it.
type zoneLimit struct {
	option string
	max    uint64 // 0: no limit
	set    bool   // by spec.extraOptions
}

func (l zoneLimit) why() string {
	if l.set {
		return fmt.Sprintf("BindCluster spec.extraOptions sets %s %d", l.option, l.max)
	}
	return fmt.Sprintf("BIND's %s is %d (9.18.28 and later, 9.20)", l.option, l.max)
}

// clusterLimit reads option from the cluster's extraOptions (parsed and
// shape-checked by the model), or gives the default.
func clusterLimit(c *model.Cluster, option string, def uint64) zoneLimit {
	for _, s := range c.ExtraOptions {
		if s.Name() != option {
			continue
		}
		if n, err := strconv.ParseUint(s.Arg(1), 10, 32); err == nil {
			return zoneLimit{option, n, true}
		}
	}
	return zoneLimit{option, def, false}
}

// checkZoneLimits: every RRset of a built zone within max-records-per-type,
// every owner within max-types-per-name (types as written: real named signs
// a zone with 100 types at a name).
func checkZoneLimits(c *model.Cluster, z *model.Zone, built *zonefile.Zone) diag.Results {
	var rs diag.Results
	perType := clusterLimit(c, "max-records-per-type", defaultMaxRecordsPerType)
	perName := clusterLimit(c, "max-types-per-name", defaultMaxTypesPerName)
	type key struct {
		owner string
		typ   uint16
	}
	count := map[key]int{}
	types := map[string]map[uint16]bool{}
	var order []key
	for _, rr := range built.RRs {
		h := rr.Header()
		k := key{strings.ToLower(h.Name), h.Rrtype}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
		if types[k.owner] == nil {
			types[k.owner] = map[uint16]bool{}
		}
		types[k.owner][h.Rrtype] = true
	}
	zone := strings.TrimSuffix(z.Name, ".")
	for _, k := range order {
		if n := count[k]; perType.max > 0 && uint64(n) > perType.max {
			src, field := rrsetField(z, k.owner, k.typ)
			rs.Errorf(src, field, "cannot serve %d %s records at %s in zone %q: %s, and named refuses to load the zone (named-checkzone passes it; every pod would answer SERVFAIL); split the RRset, or raise the limit with spec.extraOptions \"%s %d\" on BindCluster %q", n, dns.TypeToString[k.typ], k.owner, zone, perType.why(), perType.option, n, c.Name)
		}
	}
	reported := map[string]bool{}
	for _, k := range order {
		if reported[k.owner] {
			continue
		}
		// A signed zone counts the same: named (9.18.49, 9.20.30) signs 100
		// types at one name, whatever the ARM says of RRSIGs.
		n := len(types[k.owner])
		if perName.max > 0 && uint64(n) > perName.max {
			reported[k.owner] = true
			src, field := rrsetField(z, k.owner, k.typ)
			rs.Errorf(src, field, "cannot serve %d record types at %s in zone %q: %s, and named refuses to load the zone; move some types to other names, or raise the limit with spec.extraOptions \"%s %d\" on BindCluster %q", n, k.owner, zone, perName.why(), perName.option, n, c.Name)
		}
	}
	return rs
}

// rrsetField locates the RRset of owner (canonical, absolute) and type:
// the first spec.records entry or DNSRecord that writes it, else the zone.
func rrsetField(z *model.Zone, owner string, typ uint16) (diag.Source, string) {
	for _, s := range z.RRsets {
		if !strings.EqualFold(s.Type, dns.TypeToString[typ]) {
			continue
		}
		if strings.EqualFold(absOwner(s.Name, z.Name), owner) {
			field := s.Field
			if s.FromRecord {
				field = "spec.values"
			} else {
				field += ".values"
			}
			return s.Src, field
		}
	}
	return z.Src, "spec.records"
}

// absOwner is an owner as written, made absolute in zone origin.
func absOwner(name, origin string) string {
	switch {
	case name == "" || name == "@":
		return origin
	case strings.HasSuffix(name, "."):
		return name
	case origin == ".":
		return name + "."
	}
	return name + "." + origin
}
