package model

import (
	"fmt"
	"reflect"
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
