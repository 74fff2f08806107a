package validate

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/validation"
)

// bindNameChars is what a key, ACL or policy name may hold: what the
// address-match-list and server-entry parsers accept as a reference, and
// nothing a named.conf or zone file could read as syntax.
func bindName(s, what string) error {
	if s == "" {
		return fmt.Errorf("the %s name is empty", what)
	}
	if len(s) > 255 {
		return fmt.Errorf("the %s name is %d characters; at most 255", what, len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Errorf("the %s name %q holds %q: use only letters, digits, '_', '.' and '-'", what, s, rune(c))
		}
	}
	return nil
}

// keyName checks a TSIG key name: BIND reads it as a domain name.
func keyName(s string) error {
	if err := bindName(s, "key"); err != nil {
		return err
	}
	if _, ok := dns.IsDomainName(s); !ok || strings.HasPrefix(s, ".") || strings.Contains(s, "..") {
		return fmt.Errorf("the key name %q is not a domain name: every dot-separated label needs 1 to 63 characters", s)
	}
	return nil
}

// builtinACLs cannot be redefined.
var builtinACLs = map[string]bool{"any": true, "none": true, "localhost": true, "localnets": true}

// reservedPrefix starts every name bind-fn itself writes into a named.conf
// name space users share: the ACL of the cluster's peers the agent writes
// (layout.PeersACL, "bind-fn-peers"), the rndc key (layout.RNDCKeyName,
// "bind-fn-rndc") and the server lists (layout.PrimaryListName,
// SecondariesListName). An ACL or key of that name defines it twice, and
// named exits; the prefix is reserved whole so a name added later is too.
const reservedPrefix = "bind-fn-"

func reserved(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), reservedPrefix)
}

// builtinPolicies are BIND's own dnssec-policy names.
var builtinPolicies = map[string]bool{"default": true, "insecure": true, "none": true}

// viewName checks a view name: it lands in Secret names, server-list names
// and file names, so it is a DNS-1123 label.
func viewName(s string) error {
	if errs := validation.IsDNS1123Label(s); len(errs) > 0 {
		return fmt.Errorf("the view name %q is not a DNS-1123 label (it becomes part of Secret and file names): %s", s, strings.Join(errs, "; "))
	}
	return nil
}

// secretName checks a Secret name.
func secretName(s string) error {
	if errs := validation.IsDNS1123Subdomain(s); len(errs) > 0 {
		return fmt.Errorf("the Secret name %q is not valid: %s", s, strings.Join(errs, "; "))
	}
	return nil
}

// zoneName checks a zone name the way the zone-file builder does, for zones
// that are not built here (secondary, stub, forward).
func zoneName(s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("the zone name is empty")
	}
	if err := zoneNameChars(strings.TrimSuffix(s, "."), reverseZone(s)); err != nil {
		return err
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x21 || c == 0x7f:
			return fmt.Errorf("the zone name %q contains a blank or control character", s)
		case strings.IndexByte(`;()"$@\{}#*`, c) >= 0: // '/' is RFC 2317's
			return fmt.Errorf("the zone name %q contains %q: use letters, digits, '-', '_' and dots", s, rune(c))
		}
	}
	abs := strings.TrimSuffix(s, ".") + "."
	if s == "." {
		abs = "."
	}
	if _, ok := dns.IsDomainName(abs); !ok || strings.HasPrefix(abs, ".") && abs != "." || strings.Contains(abs, "..") {
		return fmt.Errorf("the zone name %q is not a valid domain name: every label needs 1 to 63 octets and the whole name at most 255", s)
	}
	return nil
}
