package namedconf

import (
	"fmt"
	"net/netip"
	"strings"
)

// AMLElement is one element of a BIND address_match_list, parsed from user
// text. Exactly one of Builtin, Prefix, Key and ACL is set.
type AMLElement struct {
	// Negated is a leading "!".
	Negated bool
	// Builtin is one of any, none, localhost, localnets.
	Builtin string
	// Prefix is an address (a single-address prefix, rendered without the
	// length) or a network with no host bits set.
	Prefix netip.Prefix
	// Key is the name of a TSIG key: key "<name>".
	Key string
	// ACL is the name of an acl statement.
	ACL string
}

var builtinACLs = map[string]bool{"any": true, "none": true, "localhost": true, "localnets": true}

const amlAccepted = `accepted: any, none, localhost, localnets, an IPv4 or IPv6 address, a network such as 10.0.0.0/8 or 2001:db8::/32, "key <name>", or an ACL name; any of them may be negated with a leading "!"`

// ParseElement parses one address-match-list element: any | none |
// localhost | localnets | address | prefix | key <name> | <acl-name>,
// optionally negated with "!". Names may be quoted. A prefix with host bits
// set (10.1.2.3/8) is rejected, as BIND rejects it.
func ParseElement(s string) (AMLElement, error) {
	var e AMLElement
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "!") {
		e.Negated = true
		t = strings.TrimSpace(t[1:])
		if strings.HasPrefix(t, "!") {
			return AMLElement{}, fmt.Errorf("invalid address match element %q: only one leading \"!\" is allowed", s)
		}
	}
	if t == "" {
		return AMLElement{}, fmt.Errorf("invalid address match element %q: it is empty; %s", s, amlAccepted)
	}
	if strings.ContainsAny(t, "{};") {
		return AMLElement{}, fmt.Errorf("invalid address match element %q: braces and semicolons are not allowed, give one element per list entry; %s", s, amlAccepted)
	}
	f := strings.Fields(t)
	if strings.EqualFold(f[0], "key") {
		if len(f) != 2 {
			return AMLElement{}, fmt.Errorf("invalid address match element %q: write \"key <name>\" with exactly one key name", s)
		}
		name, err := parseName(f[1], "key")
		if err != nil {
			return AMLElement{}, fmt.Errorf("invalid address match element %q: %w", s, err)
		}
		e.Key = name
		return e, nil
	}
	if len(f) != 1 {
		return AMLElement{}, fmt.Errorf("invalid address match element %q: unexpected %q; give one element per list entry; %s", s, f[1], amlAccepted)
	}
	word := unquote(f[0])
	if lw := strings.ToLower(word); builtinACLs[lw] {
		e.Builtin = lw
		return e, nil
	}
	if strings.Contains(word, "/") {
		p, err := netip.ParsePrefix(word)
		if err != nil {
			return AMLElement{}, fmt.Errorf("invalid address match element %q: %q is not a network in CIDR form such as 10.0.0.0/8 or 2001:db8::/32", s, word)
		}
		if m := p.Masked(); m != p {
			return AMLElement{}, fmt.Errorf("invalid address match element %q: host bits set in %q (BIND rejects it); did you mean %s?", s, word, m)
		}
		e.Prefix = p
		return e, nil
	}
	if looksLikeAddress(word) {
		a, err := netip.ParseAddr(word)
		if err != nil {
			return AMLElement{}, fmt.Errorf("invalid address match element %q: %q is not a valid IP address", s, word)
		}
		if a.Zone() != "" {
			return AMLElement{}, fmt.Errorf("invalid address match element %q: scoped addresses (%%zone) are not supported", s)
		}
		e.Prefix = netip.PrefixFrom(a, a.BitLen())
		return e, nil
	}
	name, err := parseName(word, "ACL")
	if err != nil {
		return AMLElement{}, fmt.Errorf("invalid address match element %q: %w; %s", s, err, amlAccepted)
	}
	if lw := strings.ToLower(name); builtinACLs[lw] || lw == "key" {
		// A quoted builtin: BIND matches these names case-insensitively.
		if lw == "key" {
			return AMLElement{}, fmt.Errorf("invalid address match element %q: write \"key <name>\"", s)
		}
		e.Builtin = lw
		return e, nil
	}
	e.ACL = name
	return e, nil
}

// looksLikeAddress reports whether w is meant as an IP address: it has a
// colon, or only digits and dots.
func looksLikeAddress(w string) bool {
	if strings.Contains(w, ":") {
		return true
	}
	for i := 0; i < len(w); i++ {
		if (w[i] < '0' || w[i] > '9') && w[i] != '.' {
			return false
		}
	}
	return true
}

// unquote strips one pair of surrounding double quotes.
func unquote(w string) string {
	if len(w) >= 2 && w[0] == '"' && w[len(w)-1] == '"' {
		return w[1 : len(w)-1]
	}
	return w
}

// parseName accepts a key, ACL or server-list name, optionally in double
// quotes: [A-Za-z0-9_.-]+.
func parseName(w, what string) (string, error) {
	w = unquote(w)
	if w == "" {
		return "", fmt.Errorf("empty %s name", what)
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return "", fmt.Errorf("%s name %q: character %q is not allowed (use letters, digits, '_', '.' and '-')", what, w, rune(c))
		}
	}
	return w, nil
}

// Stmt renders the element as a list entry: `!10.0.0.0/8;`, `key "xfr";`,
// `"internal";`. An element with nothing set fails at File.Bytes.
func (e AMLElement) Stmt() Stmt {
	var w []Word
	if e.Negated {
		w = append(w, Kw("!"))
	}
	switch {
	case e.Builtin != "":
		w = append(w, Kw(e.Builtin))
	case e.Prefix.IsValid():
		if e.Prefix.IsSingleIP() {
			w = append(w, Kw(e.Prefix.Addr().String()))
		} else {
			w = append(w, Kw(e.Prefix.String()))
		}
	case e.Key != "":
		w = append(w, Kw("key"), Str(e.Key))
	case e.ACL != "":
		w = append(w, Str(e.ACL))
	default:
		w = append(w, invalidWord("empty address match list element"))
	}
	return S(w...)
}
