package model

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Duration is a dnssec-policy duration, parsed with BIND's rules: ISO 8601
// as lib/isccfg/duration.c reads it, or "unlimited" where BIND takes it.
type Duration struct {
	// Text is the canonical form rendered into named.conf: upper case
	// ISO 8601 (P1Y2M3DT4H), or unlimited.
	Text string
	// Seconds as BIND counts them (a year 365 days, a month 31 days),
	// capped at 2^32-1 as BIND caps them.
	Seconds uint64
	// Unlimited is "unlimited".
	Unlimited bool
}

// isoDuration is the ISO 8601 subset BIND reads: PnW alone, or
// P[nY][nM][nD][T[nH][nM][nS]] in that order. BIND refuses weeks mixed with
// any other unit (P1W2D), hours or seconds without T (P1H), days after T
// (PT5D) and units out of order (PT1H1D).
var isoDuration = regexp.MustCompile(`^P(?:([0-9]+)W|(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)S)?)?)$`)

// unit seconds of each capture group of isoDuration, as BIND counts them.
var durationUnits = [...]uint64{7 * 86400, 365 * 86400, 31 * 86400, 86400, 3600, 60, 1}

// ParseDuration reads an ISO 8601 duration the way BIND 9.18 and 9.20 do,
// case-insensitively. It is stricter than BIND in two documented ways
// (docs/validation.md): it refuses a duration without any number ("P",
// "PT", "P1DT"), which BIND reads as zero or ignores, and BIND's TTL-style
// forms ("1d", "3600"), which the API documents as ISO 8601 only.
// unlimited says whether "unlimited" is allowed (key lifetimes).
func ParseDuration(s string, unlimited bool) (Duration, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if strings.EqualFold(t, "unlimited") {
		if !unlimited {
			return Duration{}, fmt.Errorf("cannot use %q here: give an ISO 8601 duration such as PT1H or P14D", s)
		}
		return Duration{Text: "unlimited", Unlimited: true}, nil
	}
	m := isoDuration.FindStringSubmatch(t)
	fix := "write ISO 8601 as BIND reads it: PnW alone, or P[nY][nM][nD][T[nH][nM][nS]] in that order (P1Y, P14D, PT1H, P1DT12H)"
	if unlimited {
		fix += ", or unlimited"
	}
	if m == nil || strings.HasSuffix(t, "T") {
		return Duration{}, fmt.Errorf("cannot use %q as a duration: %s", s, fix)
	}
	var total uint64
	found := false
	for i, g := range m[1:] {
		if g == "" {
			continue
		}
		found = true
		n, err := strconv.ParseUint(g, 10, 64)
		if err != nil || n > math.MaxUint32 {
			return Duration{}, fmt.Errorf("cannot use %q as a duration: %s is above BIND's limit of %d per unit", s, g, uint64(math.MaxUint32))
		}
		total += n * durationUnits[i]
	}
	if !found {
		return Duration{}, fmt.Errorf("cannot use %q as a duration: it has no number; %s", s, fix)
	}
	if total > math.MaxUint32 {
		total = math.MaxUint32
	}
	return Duration{Text: t, Seconds: total}, nil
}

// ParseBINDDuration reads a duration in every form BIND's named.conf
// accepts for dnssec-policy (lib/isccfg parse_duration): ISO 8601 as
// ParseDuration reads it, or a TTL-style value as dns_ttl_fromtext reads
// it ("3600", "5d", "1h30m", "1w2d"; units w d h m s, any case). Its Text
// is the ISO 8601 form the API takes ("5d" is P5D). bind-fn import reads
// existing configurations with it; the API itself stays ISO 8601 only.
func ParseBINDDuration(s string, unlimited bool) (Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" || t[0] == 'P' || t[0] == 'p' || strings.EqualFold(t, "unlimited") {
		return ParseDuration(t, unlimited)
	}
	secs, ok := ttlText(t)
	if !ok {
		return Duration{}, fmt.Errorf("cannot use %q as a duration: write ISO 8601 (P5D, PT1H) or BIND's TTL form (3600, 5d, 1h30m)", s)
	}
	if secs > math.MaxUint32 {
		secs = math.MaxUint32
	}
	return Duration{Text: isoSeconds(secs), Seconds: secs}, nil
}

// ttlUnits are dns_ttl_fromtext's units.
var ttlUnits = map[byte]uint64{'w': 7 * 86400, 'd': 86400, 'h': 3600, 'm': 60, 's': 1}

// ttlText reads BIND's TTL text: digits alone are seconds; otherwise
// every number has a unit, summed.
func ttlText(s string) (uint64, bool) {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return n, true
	}
	var total uint64
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i == len(s) || i > 10 {
			return 0, false
		}
		u, ok := ttlUnits[s[i]|0x20]
		if !ok {
			return 0, false
		}
		n, _ := strconv.ParseUint(s[:i], 10, 64)
		total += n * u
		s = s[i+1:]
	}
	return total, true
}

// isoSeconds writes seconds in the largest ISO 8601 unit that divides
// them exactly (P5D, PT1H, PT90S).
func isoSeconds(n uint64) string {
	switch {
	case n == 0:
		return "PT0S"
	case n%86400 == 0:
		return fmt.Sprintf("P%dD", n/86400)
	case n%3600 == 0:
		return fmt.Sprintf("PT%dH", n/3600)
	case n%60 == 0:
		return fmt.Sprintf("PT%dM", n/60)
	}
	return fmt.Sprintf("PT%dS", n)
}
