package model

import (
	"fmt"
	"strings"
)

// ZoneFileName maps a view and zone name to a file name that is also a valid
// ConfigMap key ([-._a-zA-Z0-9]+): anything else is hex-escaped as _xx.
// prefix tells zones (db), catalogs (catalog) and policy zones (rpz) apart.
func ZoneFileName(prefix, view, zone string) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(".")
	if view != "" {
		b.WriteString(escapeName(view))
		b.WriteString("_")
	}
	if zone == "." {
		b.WriteString("_2e") // the root zone; "_" is escaped in every other name
	} else {
		b.WriteString(escapeName(strings.TrimSuffix(zone, ".")))
	}
	return b.String()
}

func escapeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= '0' && ch <= '9', ch == '.', ch == '-':
			b.WriteByte(ch)
		case ch >= 'A' && ch <= 'Z':
			b.WriteByte(ch + 'a' - 'A')
		default:
			fmt.Fprintf(&b, "_%02x", ch)
		}
	}
	return b.String()
}
