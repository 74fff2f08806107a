package plan

import (
	"slices"
	"sort"
	"strconv"

	"github.com/miekg/dns"
)

// RRsetData is an RRset's TTL and sorted values.
type RRsetData struct {
	TTL    uint32
	Values []string
}

// ZoneData is a zone's content as a plan sees it: RRsets by "owner TYPE"
// (canonical owner), the SOA among them with its serial masked (serials are
// a plan's own line). Tests build it from an AXFR and check that the old
// zone with a plan applied is the new zone.
type ZoneData map[string]RRsetData

// ZoneDataOf reads RRs (an AXFR, say) into ZoneData and returns the serial.
// The SOA is taken once (an AXFR carries it twice).
func ZoneDataOf(rrs []dns.RR) (ZoneData, uint32) {
	sets := map[rrKey]*rrset{}
	var soa *dns.SOA
	for _, rr := range rrs {
		if s := addRR(sets, rr); s != nil {
			soa = s
		}
	}
	out := ZoneData{}
	for k, s := range sets {
		sort.Strings(s.values)
		out[dataKey(k.name, typeName(k.typ))] = RRsetData{TTL: s.ttl, Values: slices.Compact(s.values)}
	}
	var serial uint32
	if s := soaSet(soa); s != nil {
		serial = soa.Serial
		out[dataKey(dns.CanonicalName(soa.Hdr.Name), "SOA")] = RRsetData{TTL: s.ttl, Values: s.values}
	}
	return out, serial
}

func dataKey(name, typ string) string { return name + " " + typ }

func typeName(t uint16) string {
	if s, ok := dns.TypeToString[t]; ok {
		return s
	}
	return "TYPE" + strconv.Itoa(int(t))
}

// Apply returns d with a zone plan's RRset changes applied.
func (d ZoneData) Apply(changes []RRsetChange) ZoneData {
	out := ZoneData{}
	for k, v := range d {
		out[k] = v
	}
	for _, c := range changes {
		k := dataKey(dns.CanonicalName(c.Name), c.Type)
		if c.Change == Removed {
			delete(out, k)
			continue
		}
		out[k] = RRsetData{TTL: *c.NewTTL, Values: c.New}
	}
	return out
}

// ZoneContents reads every zone file of a render (primary, catalog and
// policy zones), by "view/zone" ("zone" without views).
func ZoneContents(objs []Object) (map[string]ZoneData, error) {
	out, _, err := zoneContents(objs)
	return out, err
}

// ZoneSerials are the SOA serials of the rendered zones, by the same ids
// as ZoneContents.
func ZoneSerials(objs []Object) (map[string]uint32, error) {
	_, serials, err := zoneContents(objs)
	return serials, err
}

func zoneContents(objs []Object) (map[string]ZoneData, map[string]uint32, error) {
	snaps, err := snapshots(objs)
	if err != nil {
		return nil, nil, err
	}
	out, serials := map[string]ZoneData{}, map[string]uint32{}
	for _, s := range snaps {
		for id, z := range s.zones() {
			if z.err != nil {
				return nil, nil, z.err
			}
			if z.text == nil {
				continue
			}
			z.parse()
			if z.err != nil {
				return nil, nil, z.err
			}
			d := ZoneData{}
			for k, set := range z.rrsets {
				d[dataKey(k.name, typeName(k.typ))] = RRsetData{TTL: set.ttl, Values: set.values}
			}
			if soa := soaSet(z.soa); soa != nil {
				d[dataKey(dns.CanonicalName(z.soa.Hdr.Name), "SOA")] = RRsetData{TTL: soa.ttl, Values: soa.values}
				serials[id] = z.soa.Serial
			}
			out[id] = d
		}
	}
	return out, serials, nil
}
