package vocab

import "slices"

// PolicyDuration is one duration statement of a dnssec-policy: its
// named.conf keyword, the BindDNSSECPolicy spec field that sets it, and
// BIND's default.
type PolicyDuration struct {
	// Keyword in named.conf (signatures-refresh).
	Keyword string
	// Field of BindDNSSECPolicy.spec, its JSON name (signaturesRefresh).
	Field string
	// Default is BIND's value when the policy sets none, in seconds
	// (lib/dns/include/dns/kasp.h DNS_KASP_*, the same in 9.18 and 9.20).
	Default uint64
}

// PolicyDurations are the dnssec-policy durations the API sets, in the
// order bind-fn renders them. The model parses them, validate computes
// BIND's rollover relations from them (defaults filled in), the importer
// reads them back from named.conf, pkggen draws them and the differential
// harness probes them: all from this table.
var PolicyDurations = []PolicyDuration{
	{"dnskey-ttl", "dnskeyTTL", 3600},
	{"max-zone-ttl", "maxZoneTTL", 86400},
	{"signatures-refresh", "signaturesRefresh", 5 * 86400},
	{"signatures-validity", "signaturesValidity", 14 * 86400},
	{"signatures-validity-dnskey", "signaturesValidityDNSKEY", 14 * 86400},
	{"publish-safety", "publishSafety", 3600},
	{"retire-safety", "retireSafety", 3600},
	{"purge-keys", "purgeKeys", 90 * 86400},
	{"zone-propagation-delay", "zonePropagationDelay", 300},
	{"parent-ds-ttl", "parentDSTTL", 86400},
	{"parent-propagation-delay", "parentPropagationDelay", 3600},
}

// PolicyDurationByKeyword finds a duration by its named.conf keyword.
func PolicyDurationByKeyword(kw string) (PolicyDuration, bool) {
	return findDuration(func(d PolicyDuration) bool { return d.Keyword == kw })
}

// PolicyDurationByField finds a duration by its BindDNSSECPolicy field.
func PolicyDurationByField(field string) (PolicyDuration, bool) {
	return findDuration(func(d PolicyDuration) bool { return d.Field == field })
}

func findDuration(match func(PolicyDuration) bool) (PolicyDuration, bool) {
	if i := slices.IndexFunc(PolicyDurations, match); i >= 0 {
		return PolicyDurations[i], true
	}
	return PolicyDuration{}, false
}
