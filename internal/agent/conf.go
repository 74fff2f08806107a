package agent

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// Algorithms BIND accepts for TSIG keys.
var algorithms = map[string]bool{
	"hmac-md5": true, "hmac-sha1": true, "hmac-sha224": true,
	"hmac-sha256": true, "hmac-sha384": true, "hmac-sha512": true,
}

func validAlgorithm(a string) bool { return algorithms[strings.ToLower(a)] }

// DefaultAlgorithm is used when neither the config nor the Secret names one.
const DefaultAlgorithm = "hmac-sha256"

// Peers is the resolved content of one server list.
type Peers struct {
	Name string
	Key  string
	Port int // 0: BIND's default
	IPs  []net.IP
}

// ServersConf renders the server lists include through the typed
// named.conf writer: one `primaries "<name>" { <ip> [port <p>] key "<key>"; ... };`
// per list, lists sorted by name, addresses sorted and de-duplicated. An
// empty list renders as `primaries "<name>" { };`. It also defines the ACL
// layout.PeersACL of every resolved peer address and loopback, which the
// rendered config exempts from response rate limiting: the cluster's own SOA
// queries and transfers, and the agent's readiness queries, must never be
// dropped as a flood (they come from one /24).
func ServersConf(lists []Peers) (string, error) {
	ls := append([]Peers(nil), lists...)
	sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
	var f namedconf.File
	f.Comment("Written by bind-fn-agent from resolved peer names. Do not edit.")
	var peers []net.IP
	for _, l := range ls {
		peers = append(peers, l.IPs...)
	}
	// Loopback too: the agent's own readiness queries and UPDATEs. It also
	// keeps the ACL from ever being empty.
	peers = append(peers, net.IPv4(127, 0, 0, 1), net.IPv6loopback)
	var acl []namedconf.Stmt
	for _, ip := range SortIPs(peers) {
		if a, ok := netip.AddrFromSlice(ip); ok {
			acl = append(acl, namedconf.S(namedconf.Kw(a.Unmap().String())))
		}
	}
	f.Add(namedconf.B([]namedconf.Word{namedconf.Kw("acl"), namedconf.Str(layout.PeersACL)}, acl...))
	for _, l := range ls {
		var entries []namedconf.Stmt
		for _, ip := range SortIPs(l.IPs) {
			a, ok := netip.AddrFromSlice(ip)
			if !ok {
				continue
			}
			entries = append(entries, namedconf.ServerEntry{Addr: a.Unmap(), Port: l.Port, Key: l.Key}.Stmt())
		}
		f.Add(namedconf.B([]namedconf.Word{namedconf.Kw("primaries"), namedconf.Str(l.Name)}, entries...))
	}
	b, err := f.Bytes()
	if err != nil {
		return "", fmt.Errorf("cannot render %s: %w", "servers.conf", err)
	}
	return string(b), nil
}

// SortIPs returns ips sorted (IPv4 before IPv6, then by bytes) without duplicates.
func SortIPs(ips []net.IP) []net.IP {
	seen := map[string]bool{}
	var out []net.IP
	for _, ip := range ips {
		if ip == nil {
			continue
		}
		if v4 := ip.To4(); v4 != nil {
			ip = v4
		}
		if seen[string(ip)] {
			continue
		}
		seen[string(ip)] = true
		out = append(out, ip)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) < len(out[j])
		}
		return string(out[i]) < string(out[j])
	})
	return out
}

// Key is a TSIG key statement.
type Key struct {
	Name      string
	Algorithm string
	Secret    string // base64
}

// KeyStatement renders `key "<name>" { algorithm <alg>; secret "<b64>"; };`
// after validating the name, the algorithm and the base64 material.
func KeyStatement(k Key) (string, error) {
	if err := checkName(k.Name); err != nil {
		return "", fmt.Errorf("key name: %w", err)
	}
	alg := strings.ToLower(k.Algorithm)
	if alg == "" {
		alg = DefaultAlgorithm
	}
	if !validAlgorithm(alg) {
		return "", fmt.Errorf("key %q: %q is not a TSIG algorithm BIND knows", k.Name, k.Algorithm)
	}
	raw, err := base64.StdEncoding.DecodeString(k.Secret)
	if err != nil || len(raw) == 0 {
		return "", fmt.Errorf("key %q: secret is not valid base64", k.Name)
	}
	b, err := namedconf.Format(namedconf.B([]namedconf.Word{namedconf.Kw("key"), namedconf.Str(k.Name)},
		namedconf.S(namedconf.Kw("algorithm"), namedconf.Kw(alg)),
		namedconf.S(namedconf.Kw("secret"), namedconf.Str(k.Secret))))
	if err != nil {
		return "", fmt.Errorf("key %q: %w", k.Name, err)
	}
	return string(b), nil
}

// ParseKeys reads the key statements of a named.conf fragment such as a
// key.conf or rndc.key: `key "name" { algorithm x; secret "y"; };`. Comments
// (#, //, /* */) are skipped; other statements are ignored.
func ParseKeys(text string) ([]Key, error) {
	stmts, err := namedconf.ParseKeys(text) // the one named.conf lexer
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, st := range stmts {
		k := Key{Name: st.Name, Algorithm: st.Algorithm, Secret: st.Secret}
		if k.Algorithm == "" {
			k.Algorithm = DefaultAlgorithm
		}
		if _, err := base64.StdEncoding.DecodeString(k.Secret); err != nil || k.Secret == "" {
			return nil, fmt.Errorf("key %q: secret is not valid base64", k.Name)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// FindKey returns the key called name in a key file's text.
func FindKey(text, name string) (Key, error) {
	keys, err := ParseKeys(text)
	if err != nil {
		return Key{}, err
	}
	for _, k := range keys {
		if strings.EqualFold(strings.TrimSuffix(k.Name, "."), strings.TrimSuffix(name, ".")) {
			return k, nil
		}
	}
	return Key{}, fmt.Errorf("no key %q in the file", name)
}
