package zonefile

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/miekg/dns"
	"golang.org/x/net/idna"
)

// qualify turns a name as a user wrote it into a canonical absolute name:
// "" and "@" are origin, a name without a trailing dot is relative to origin,
// Unicode labels become punycode (IDNA 2008 lookup rules), and the result is
// lower case with every escape in its canonical form. It does not check that
// the name is inside origin; see inZone.
func qualify(name, origin string) (string, error) {
	if name == "" || name == "@" {
		return origin, nil
	}
	if err := checkNameChars(name); err != nil {
		return "", err
	}
	ascii, err := toASCII(name)
	if err != nil {
		return "", err
	}
	abs := ascii
	if !dns.IsFqdn(abs) {
		if origin == "." {
			abs += "."
		} else {
			abs += "." + origin
		}
	}
	return canonical(abs)
}

// absolute is qualify for names that are always absolute (a mailbox's
// domain, an RPZ trigger or redirect target): a missing trailing dot is
// added rather than the origin.
func absolute(name string) (string, error) {
	if name == "" || name == "@" {
		return "", fmt.Errorf("the name is empty")
	}
	if name == "." {
		return ".", nil
	}
	return qualify(strings.TrimSuffix(name, ".")+".", ".")
}

// canonical validates an absolute name and returns its canonical
// presentation form (through wire format, then ASCII lower case).
func canonical(abs string) (string, error) {
	if plainName(abs) {
		// Wire form and back changes nothing in a plain name.
		return asciiLower(abs), nil
	}
	if err := nameLimitErr(abs); err != nil {
		return "", err
	}
	if _, ok := dns.IsDomainName(abs); !ok {
		return "", fmt.Errorf("%q is not a valid domain name: every label needs 1 to 63 octets and the whole name at most 255", abs)
	}
	buf := make([]byte, 256)
	off, err := dns.PackDomainName(abs, buf, 0, nil, false)
	if err != nil {
		return "", fmt.Errorf("%q is not a valid domain name: %v", abs, err)
	}
	s, _, err := dns.UnpackDomainName(buf[:off], 0)
	if err != nil {
		return "", fmt.Errorf("%q is not a valid domain name: %v", abs, err)
	}
	s = dns.CanonicalName(s)
	if strings.HasPrefix(s, "$") {
		// miekg/dns does not escape '$', but a zone file line that starts
		// with it is a directive ($ORIGIN): keep the escape.
		s = `\` + s
	}
	return s, nil
}

// checkNameChars rejects what a zone file would read as something other than
// one name: blanks, control characters, comments, quotes, parentheses and
// directives. Any of them may still be written escaped (\; or \059).
func checkNameChars(name string) error {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '\\':
			if i+1 >= len(name) {
				return fmt.Errorf("name %q ends in a lone backslash", name)
			}
			if isDigit(name[i+1]) {
				if i+3 >= len(name) || !isDigit(name[i+2]) || !isDigit(name[i+3]) {
					return fmt.Errorf("name %q has a bad \\DDD escape", name)
				}
				if v := int(name[i+1]-'0')*100 + int(name[i+2]-'0')*10 + int(name[i+3]-'0'); v > 255 {
					return fmt.Errorf("name %q has a \\DDD escape above 255", name)
				}
				i += 3
				continue
			}
			if name[i+1] < 0x20 || name[i+1] == 0x7f {
				return fmt.Errorf("name %q contains a control character", name)
			}
			i++
		case c < 0x20 || c == 0x7f:
			return fmt.Errorf("name %q contains a control character; write it as \\DDD", name)
		case c == ' ':
			return fmt.Errorf("name %q contains a blank", name)
		case strings.IndexByte(`;()"$@`, c) >= 0:
			return fmt.Errorf("name %q contains %q, which a zone file does not read as part of a name; escape it as \\%c if you mean it", name, c, c)
		}
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// toASCII converts labels with non-ASCII characters to punycode. Labels that
// are already ASCII are kept as written (wildcards, underscores, escapes).
func toASCII(name string) (string, error) {
	ascii := true
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return name, nil
	}
	labels := splitLabels(name)
	for i, l := range labels {
		if l == "" {
			continue
		}
		nonASCII := false
		for j := 0; j < len(l); j++ {
			if l[j] >= 0x80 {
				nonASCII = true
				break
			}
		}
		if !nonASCII {
			continue
		}
		a, err := idna.Lookup.ToASCII(l)
		if err != nil {
			return "", fmt.Errorf("name %q: label %q is not a valid internationalized label: %v", name, l, err)
		}
		labels[i] = a
	}
	return strings.Join(labels, "."), nil
}

// asciiLower is strings.ToLower for ASCII text, without a copy when
// nothing changes.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// splitLabels splits on unescaped dots, keeping escapes as written. A
// trailing dot gives a final empty label, so Join restores it.
func splitLabels(name string) []string {
	var out []string
	start := 0
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '\\':
			i++
		case '.':
			out = append(out, name[start:i])
			start = i + 1
		}
	}
	return append(out, name[start:])
}

// inZone reports whether name is origin or below it.
func inZone(name, origin string) bool {
	if plainName(name) && plainName(origin) && name == asciiLower(name) && origin == asciiLower(origin) {
		// Lower-case plain names: a label-wise suffix is a text suffix.
		return name == origin || strings.HasSuffix(name, "."+origin)
	}
	return dns.IsSubDomain(origin, name)
}

// nameKey is a name's labels in wire form, lower case, right-most first:
// comparing two keys label by label is RFC 4034 §6.1 canonical order.
type nameKey [][]byte

func newNameKey(name string) nameKey {
	// The wire form is at most one byte longer than the absolute text.
	buf := make([]byte, min(len(name)+2, 256))
	off, err := dns.PackDomainName(dns.Fqdn(name), buf, 0, nil, false)
	if err != nil && len(buf) < 256 {
		buf = make([]byte, 256)
		off, err = dns.PackDomainName(dns.Fqdn(name), buf, 0, nil, false)
	}
	if err != nil {
		// Unreachable for validated names; order such names by their text.
		return nameKey{bytes.ToLower([]byte(name))}
	}
	ascii := true
	count := 0
	for i := 0; i < off && buf[i] != 0; {
		n := int(buf[i])
		count++
		for _, c := range buf[i+1 : i+1+n] {
			if c >= 0x80 {
				ascii = false
			}
		}
		i += 1 + n
	}
	labels := make([][]byte, 0, count)
	for i := 0; i < off && buf[i] != 0; {
		n := int(buf[i])
		l := buf[i+1 : i+1+n : i+1+n]
		if ascii {
			// bytes.ToLower of ASCII, in place: the labels share buf.
			for j, c := range l {
				if 'A' <= c && c <= 'Z' {
					l[j] = c + 'a' - 'A'
				}
			}
		} else {
			l = bytes.ToLower(l)
		}
		labels = append(labels, l)
		i += 1 + n
	}
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	return labels
}

func compareNameKeys(a, b nameKey) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := bytes.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// mailbox turns the SOA email into an RNAME: "local@domain" becomes
// local.domain. with the dots of the local part escaped (RFC 1035 §8);
// anything else is a domain name, relative to origin unless absolute.
func mailbox(email, origin string) (string, error) {
	i := strings.LastIndexByte(email, '@')
	if i < 0 {
		return qualify(email, origin)
	}
	local, domain := email[:i], email[i+1:]
	if local == "" || domain == "" {
		return "", fmt.Errorf("mailbox %q needs a local part and a domain", email)
	}
	var b strings.Builder
	for j := 0; j < len(local); j++ {
		c := local[j]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', isDigit(c), strings.IndexByte("!#%&'*+-/=?^_`{|}~", c) >= 0:
			b.WriteByte(c)
		case c == '.':
			b.WriteString(`\.`)
		default:
			return "", fmt.Errorf("mailbox %q: the local part may hold only letters, digits, dots and !#%%&'*+-/=?^_`{|}~", email)
		}
	}
	d, err := absolute(domain)
	if err != nil {
		return "", fmt.Errorf("mailbox %q: %v", email, err)
	}
	if d == "." {
		return canonical(b.String() + ".")
	}
	return canonical(b.String() + "." + d)
}
