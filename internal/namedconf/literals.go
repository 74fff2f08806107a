package namedconf

import (
	"net/netip"
	"regexp"
	"strings"
)

var ipLiteral = regexp.MustCompile(`[0-9A-Fa-f:.]*[:.][0-9A-Fa-f:.]*(?:/[0-9]+)?`)

// AddressLiterals finds the IP addresses and networks outside quoted
// strings and comments of a named.conf.
func AddressLiterals(conf string) []netip.Prefix {
	var out []netip.Prefix
	for _, line := range strings.Split(conf, "\n") {
		line = stripQuoted(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		for _, m := range ipLiteral.FindAllString(line, -1) {
			if p, err := netip.ParsePrefix(m); err == nil {
				out = append(out, p)
			} else if a, err := netip.ParseAddr(m); err == nil {
				out = append(out, netip.PrefixFrom(a, a.BitLen()))
			}
		}
	}
	return out
}

// stripQuoted blanks out double-quoted strings (with their escapes).
func stripQuoted(line string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case in && ch == '\\':
			i++
		case ch == '"':
			in = !in
			b.WriteByte(' ')
		case !in:
			b.WriteByte(ch)
		}
	}
	return b.String()
}
