package namedconf

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ServerEntry is one entry of primaries, also-notify, forwarders or a
// catalog zone's default-primaries: an address with an optional port and
// TSIG key, or a reference to a named server list (primaries "<name>").
type ServerEntry struct {
	Addr netip.Addr
	// Port is 0 for BIND's default.
	Port int
	// Key is the TSIG key name; "" for none.
	Key string
	// List names a server list; then Addr, Port and Key are unset
	// (BIND 9.18 accepts no port or key after a list name).
	List string
	// TLS names the tls block the entry is reached with (zone transfers
	// over TLS), or TLSEphemeral; "" for plain DNS.
	TLS string
}

var errNoEntry = errors.New("server entry is empty")

const serverAccepted = `accepted: "<address> [port <1-65535>] [key <name>]" or the name of a server list`

// ParseServerEntry parses "192.0.2.1", "2001:db8::1 port 5353",
// "192.0.2.1 key xfr", `192.0.2.1 port 53 key "xfr"` or a list name
// ("secondaries"). Names may be quoted.
func ParseServerEntry(s string) (ServerEntry, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ServerEntry{}, fmt.Errorf("invalid server %q: %v; %s", s, errNoEntry, serverAccepted)
	}
	if strings.ContainsAny(s, "{};") {
		return ServerEntry{}, fmt.Errorf("invalid server %q: braces and semicolons are not allowed; %s", s, serverAccepted)
	}
	var e ServerEntry
	if first := unquote(f[0]); looksLikeAddress(first) {
		f[0] = first
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			return ServerEntry{}, fmt.Errorf("invalid server %q: %q is not a valid IP address (BIND takes addresses or list names here, never host names)", s, f[0])
		}
		if a.Zone() != "" {
			return ServerEntry{}, fmt.Errorf("invalid server %q: scoped addresses (%%zone) are not supported", s)
		}
		e.Addr = a
	} else {
		name, err := parseName(f[0], "server list")
		if err != nil {
			return ServerEntry{}, fmt.Errorf("invalid server %q: %w; %s", s, err, serverAccepted)
		}
		e.List = name
		if len(f) > 1 {
			return ServerEntry{}, fmt.Errorf("invalid server %q: BIND 9.18 accepts no port or key after a server list name; put them on the entries of list %q", s, name)
		}
		return e, nil
	}
	for i := 1; i < len(f); i += 2 {
		opt := strings.ToLower(f[i])
		if i+1 >= len(f) {
			return ServerEntry{}, fmt.Errorf("invalid server %q: %q needs a value; %s", s, f[i], serverAccepted)
		}
		v := f[i+1]
		switch opt {
		case "port":
			if e.Port != 0 {
				return ServerEntry{}, fmt.Errorf("invalid server %q: port given twice", s)
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 65535 {
				return ServerEntry{}, fmt.Errorf("invalid server %q: port %q is not a number from 1 to 65535", s, v)
			}
			e.Port = n
		case "key":
			if e.Key != "" {
				return ServerEntry{}, fmt.Errorf("invalid server %q: key given twice", s)
			}
			name, err := parseName(v, "key")
			if err != nil {
				return ServerEntry{}, fmt.Errorf("invalid server %q: %w", s, err)
			}
			e.Key = name
		default:
			return ServerEntry{}, fmt.Errorf("invalid server %q: unexpected %q; %s", s, f[i], serverAccepted)
		}
	}
	return e, nil
}

// Stmt renders the entry: `192.0.2.1 port 5353 key "xfr";` or `"list";`.
// An entry that is neither, or a list with a port or key, fails at
// File.Bytes.
func (e ServerEntry) Stmt() Stmt {
	switch {
	case e.List != "":
		if e.Addr.IsValid() || e.Port != 0 || e.Key != "" || e.TLS != "" {
			return S(invalidWord(fmt.Sprintf("server list %q with an address, port or key: BIND 9.18 accepts only the list name", e.List)))
		}
		return S(Str(e.List))
	case !e.Addr.IsValid():
		return S(invalidWord("server entry has neither an address nor a list name"))
	case e.Addr.Zone() != "":
		return S(invalidWord(fmt.Sprintf("scoped address %q is not supported", e.Addr)))
	}
	w := []Word{Kw(e.Addr.String())}
	if e.Port != 0 {
		if e.Port < 1 || e.Port > 65535 {
			return S(invalidWord(fmt.Sprintf("port %d is not from 1 to 65535", e.Port)))
		}
		w = append(w, Kw("port"), Int(int64(e.Port)))
	}
	if e.Key != "" {
		w = append(w, Kw("key"), Str(e.Key))
	}
	if e.TLS != "" {
		w = append(w, Kw("tls"), Str(e.TLS))
	}
	return S(w...)
}
