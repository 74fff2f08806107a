package model

import (
	"fmt"
	"github.com/miekg/dns"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// DefaultMaxZoneTTL is BIND's max-zone-ttl of a dnssec-policy that sets
// none (PT24H in 9.18 and 9.20): named refuses to load a signed zone with a
// longer TTL ("TTL exceeds configured max-zone-ttl").
const DefaultMaxZoneTTL = 86400

// PolicyKey is one key of a dnssec-policy, defaults applied, every value
// known to be valid.
type PolicyKey struct {
	// Field is the key's path in the policy (spec.keys[1]); the default
	// key of a policy without keys has spec.keys.
	Field string
	// Role is csk, ksk or zsk.
	Role string
	// Algorithm is a lower-case mnemonic (or number) of an accepted
	// vocab.DNSSEC algorithm, aliases resolved.
	Algorithm string
	// Lifetime as BIND reads it (unlimited when unset).
	Lifetime Duration
	Bits     *int32
}

// LifetimeSeconds is the key's lifetime as a .state file's Lifetime
// records it: seconds, 0 for unlimited.
func (k PolicyKey) LifetimeSeconds() uint64 {
	if k.Lifetime.Unlimited {
		return 0
	}
	return k.Lifetime.Seconds
}

// PolicyDuration is one duration option of a dnssec-policy.
type PolicyDuration struct {
	// Keyword in named.conf (dnskey-ttl), Field in the spec (dnskeyTTL).
	Keyword, Field string
	Value          Duration
}

// parsePolicy reads a BindDNSSECPolicy's keys and durations into typed
// values; each bad value is a located error and is left out.
func parsePolicy(p *DNSSECPolicy, rs *diag.Results) {
	sp := p.Spec
	ks := sp.Keys
	if len(ks) == 0 {
		ks = []v1alpha1.DNSSECKey{{Role: "csk"}}
	}
	for i, k := range ks {
		f := fmt.Sprintf("spec.keys[%d]", i)
		if len(sp.Keys) == 0 {
			f = "spec.keys"
		}
		ok := true
		role := strings.ToLower(k.Role)
		if role != "csk" && role != "ksk" && role != "zsk" {
			rs.Errorf(p.Src, f+".role", "cannot use key role %q: use csk, or ksk and zsk", k.Role)
			ok = false
		}
		alg := strings.ToLower(k.Algorithm)
		if alg == "" {
			alg = vocab.DefaultDNSSEC
		}
		if a, ok := vocab.DNSSECAliases[alg]; ok {
			alg = a
		}
		if a, ok := vocab.DNSSECByName(alg); !ok || !a.Accepted {
			rs.Errorf(p.Src, f+".algorithm", "cannot use DNSSEC algorithm %q: use %s", k.Algorithm, vocab.DNSSECAccepted)
			ok = false
		}
		life := Duration{Text: "unlimited", Unlimited: true}
		if k.Lifetime != "" {
			d, err := ParseDuration(k.Lifetime, true)
			if err != nil {
				rs.Errorf(p.Src, f+".lifetime", "cannot use %q as a key lifetime: %v", k.Lifetime, err)
				ok = false
			}
			life = d
		}
		if ok {
			p.Keys = append(p.Keys, PolicyKey{Field: f, Role: role, Algorithm: alg, Lifetime: life, Bits: k.Bits})
		}
	}
	parseParent(p, rs)
	p.MaxZoneTTL = DefaultMaxZoneTTL
	for _, pd := range vocab.PolicyDurations {
		text := *PolicyDurationField(&sp, pd)
		if text == "" {
			continue
		}
		v, err := ParseDuration(text, false)
		if err != nil {
			rs.Errorf(p.Src, "spec."+pd.Field, "%v", err)
			continue
		}
		if pd.Keyword == "max-zone-ttl" {
			p.MaxZoneTTL = v.Seconds
		}
		p.Durations = append(p.Durations, PolicyDuration{Keyword: pd.Keyword, Field: pd.Field, Value: v})
	}
}

// DurationSeconds is the policy's duration of a dnssec-policy keyword
// (parent-ds-ttl) in seconds: the parsed spec value, else BIND's default.
func (p *DNSSECPolicy) DurationSeconds(keyword string) uint64 {
	for _, d := range p.Durations {
		if d.Keyword == keyword {
			return d.Value.Seconds
		}
	}
	d, _ := vocab.PolicyDurationByKeyword(keyword)
	return d.Default
}

// CDSDigestTypes are the CDS digest types a policy may name: BIND 9.20's
// cds-digest-types takes SHA-1 too, with a warning that it is deprecated
// (RFC 8624: MUST NOT be used for DS); bind-fn refuses it.
var CDSDigestTypes = []string{"sha-256", "sha-384"}

// parseParent reads what a policy says about the parent: the CDS digest
// types and the parental agents.
func parseParent(p *DNSSECPolicy, rs *diag.Results) {
	sp := p.Spec
	seen := map[string]bool{}
	for i, d := range sp.CDSDigestTypes {
		f := fmt.Sprintf("spec.cdsDigestTypes[%d]", i)
		t := strings.ToLower(strings.TrimSpace(d))
		switch {
		case !slices.Contains(CDSDigestTypes, t):
			rs.Errorf(p.Src, f, "cannot use CDS digest type %q: use %s", d, strings.Join(CDSDigestTypes, " or "))
		case seen[t]:
			rs.Errorf(p.Src, f, "cannot list CDS digest type %q twice: remove one", d)
		default:
			seen[t] = true
			p.CDSDigests = append(p.CDSDigests, t)
		}
	}
	if sp.CDSDigestTypes != nil && len(sp.CDSDigestTypes) == 0 {
		rs.Errorf(p.Src, "spec.cdsDigestTypes", "cannot publish CDS records of no digest type: list sha-256, or leave cdsDigestTypes out for BIND's default")
	}
	pa := sp.ParentalAgents
	if pa == nil {
		return
	}
	if len(pa.Addresses) == 0 && !pa.ParentInCluster {
		rs.Errorf(p.Src, "spec.parentalAgents", "cannot ask no parental agent for the DS: list addresses, or set parentInCluster when the parent zone is a BindZone of the same cluster")
	}
	if len(pa.Addresses) > 0 && pa.ParentInCluster {
		rs.Errorf(p.Src, "spec.parentalAgents", "cannot both list addresses and set parentInCluster: named asks either the listed servers or itself; keep one")
	}
	for i, a := range pa.Addresses {
		ap, err := parseAgent(a)
		if err != nil {
			rs.Errorf(p.Src, fmt.Sprintf("spec.parentalAgents.addresses[%d]", i), "cannot use %q as a parental agent: %v", a, err)
			continue
		}
		p.ParentalAgents = append(p.ParentalAgents, ap)
	}
}

// parseAgent reads "192.0.2.1", "192.0.2.1:5353" or "[2001:db8::1]:5353"
// (port 0: none given).
func parseAgent(s string) (netip.AddrPort, error) {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return netip.AddrPortFrom(a, 0), nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil || ap.Addr().Zone() != "" || ap.Port() == 0 {
		return netip.AddrPort{}, fmt.Errorf("give an IP address, or an address and port (192.0.2.53, 192.0.2.53:5353, [2001:db8::53]:5353); BIND takes no names here")
	}
	return ap, nil
}

// PolicyDurationField is the field of sp that sets d, found by its JSON
// name, so that the API's fields and vocab.PolicyDurations need no third
// list between them (TestPolicyDurationFields: every entry has its field).
func PolicyDurationField(sp *v1alpha1.BindDNSSECPolicySpec, d vocab.PolicyDuration) *string {
	v := reflect.ValueOf(sp).Elem()
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name == d.Field {
			if s, ok := v.Field(i).Addr().Interface().(*string); ok {
				return s
			}
		}
	}
	panic(fmt.Sprintf("model: BindDNSSECPolicySpec has no string field %q for %s (vocab.PolicyDurations)", d.Field, d.Keyword))
}

// Rollover is one key rollover a zone asks for (spec.dnssecRollover.<role>).
type Rollover struct {
	// Field is spec.dnssecRollover.ksk (and so on).
	Field string
	// Role is ksk, zsk or csk: the policy has exactly one key of it.
	Role  string
	Label string
	Done  bool
}

// rolloverLabel is the shape of a rollover label (as a policy name).
var rolloverLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// parseRollovers reads a zone's spec.dnssecRollover: a rollover needs a
// signed primary zone whose policy has exactly one key of the role (the
// render makes one successor for it). Bad entries are located errors and
// are left out.
func parseRollovers(z *Zone, rs *diag.Results) []Rollover {
	r := z.Spec.DNSSECRollover
	if r == nil {
		return nil
	}
	if z.Spec.Type != v1alpha1.ZonePrimary || z.Spec.DNSSECPolicyRef == "" {
		rs.Errorf(z.Src, "spec.dnssecRollover", "cannot roll the DNSSEC keys of zone %q: it is not a signed primary zone; remove dnssecRollover, or sign the zone (spec.dnssecPolicyRef)", z.Spec.ZoneName)
		return nil
	}
	var out []Rollover
	for _, e := range []struct {
		role string
		r    *v1alpha1.DNSSECRollover
	}{{"ksk", r.KSK}, {"zsk", r.ZSK}, {"csk", r.CSK}} {
		if e.r == nil {
			continue
		}
		f := "spec.dnssecRollover." + e.role
		if !rolloverLabel.MatchString(e.r.Label) {
			rs.Errorf(z.Src, f+".label", "cannot use %q as a rollover label: use 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit (\"2027-01\")", e.r.Label)
			continue
		}
		if z.DNSSEC == nil {
			continue // the policy reference is reported
		}
		n := 0
		var roles []string
		for _, k := range z.DNSSEC.Keys {
			if k.Role == e.role {
				n++
			}
			roles = append(roles, k.Role)
		}
		if n != 1 {
			rs.Errorf(z.Src, f, "cannot roll the %s of zone %q: dnssec-policy %q has %d keys of that role (%s), and a rollover takes exactly one; roll a role the policy has once", strings.ToUpper(e.role), z.Spec.ZoneName, z.DNSSEC.Name, n, strings.Join(roles, ", "))
			continue
		}
		out = append(out, Rollover{Field: f, Role: e.role, Label: e.r.Label, Done: e.r.Done})
	}
	return out
}

// parseOtherSigners reads a zone's spec.dnssecOtherSigners: DNSKEY records
// of the zone (flags 256 or 257) on a signed primary zone.
func parseOtherSigners(z *Zone, rs *diag.Results) []*dns.DNSKEY {
	lines := z.Spec.DNSSECOtherSigners
	if len(lines) == 0 {
		return nil
	}
	if z.Spec.Type != v1alpha1.ZonePrimary || z.Spec.DNSSECPolicyRef == "" {
		rs.Errorf(z.Src, "spec.dnssecOtherSigners", "cannot add other signers' DNSKEYs to zone %q: it is not a signed primary zone; remove dnssecOtherSigners, or sign the zone (spec.dnssecPolicyRef)", z.Spec.ZoneName)
		return nil
	}
	var out []*dns.DNSKEY
	seen := map[string]bool{}
	for i, line := range lines {
		f := fmt.Sprintf("spec.dnssecOtherSigners[%d]", i)
		rr, err := dns.NewRR(line)
		k, ok := rr.(*dns.DNSKEY)
		switch {
		case err != nil:
			rs.Errorf(z.Src, f, "cannot read the DNSKEY record: %v; paste the record line of the other signer's .key file", err)
			continue
		case !ok:
			rs.Errorf(z.Src, f, "cannot use a record that is not a DNSKEY; paste the record line of the other signer's .key file")
			continue
		case dns.CanonicalName(k.Hdr.Name) != z.Name:
			rs.Errorf(z.Src, f, "cannot add a DNSKEY of %q to zone %q: the owner must be the zone's apex", k.Hdr.Name, strings.TrimSuffix(z.Name, "."))
			continue
		case k.Flags != 256 && k.Flags != 257 || k.Protocol != 3:
			rs.Errorf(z.Src, f, "cannot use DNSKEY flags %d protocol %d: want 256 (ZSK) or 257 (KSK), protocol 3", k.Flags, k.Protocol)
			continue
		}
		id := fmt.Sprintf("%d/%d/%s", k.Algorithm, k.Flags, k.PublicKey)
		if seen[id] {
			rs.Errorf(z.Src, f, "cannot list DNSKEY tag %d twice: remove one", k.KeyTag())
			continue
		}
		seen[id] = true
		out = append(out, k)
	}
	return out
}
