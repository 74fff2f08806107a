// Package vocab holds BIND's vocabularies bind-fn speaks, one table each:
// the TSIG algorithms of a key statement, the DNSSEC algorithms of a
// dnssec-policy, and the zone types with their old names (master, slave,
// masters). Every package that checks, renders, signs or generates one
// of these reads it here; nothing else lists them. It is a leaf: it imports
// miekg/dns only.
package vocab

import (
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// TSIGAlgorithm is one TSIG algorithm of a BIND key statement.
type TSIGAlgorithm struct {
	// Name as a key statement writes it (hmac-sha256).
	Name string
	// Size is the key material tsig-keygen makes, in bytes: the digest size.
	Size int
	// Wire is the algorithm's name in a TSIG record (RFC 8945 §6).
	Wire string
}

// TSIG are the algorithms BIND 9.18 and 9.20 accept in a key statement.
var TSIG = []TSIGAlgorithm{
	{"hmac-md5", 16, dns.HmacMD5},
	{"hmac-sha1", 20, dns.HmacSHA1},
	{"hmac-sha224", 28, dns.HmacSHA224},
	{"hmac-sha256", 32, dns.HmacSHA256},
	{"hmac-sha384", 48, dns.HmacSHA384},
	{"hmac-sha512", 64, dns.HmacSHA512},
}

// DefaultTSIG is the algorithm of a key that names none (tsig-keygen's).
const DefaultTSIG = "hmac-sha256"

// TSIGByName finds an algorithm by its key-statement name, in any case.
func TSIGByName(s string) (TSIGAlgorithm, bool) {
	s = strings.ToLower(s)
	for _, a := range TSIG {
		if a.Name == s {
			return a, true
		}
	}
	return TSIGAlgorithm{}, false
}

// TSIGNames are the names of TSIG, in table order.
func TSIGNames() []string {
	out := make([]string, len(TSIG))
	for i, a := range TSIG {
		out[i] = a.Name
	}
	return out
}

// DNSSECAlgorithm is one DNSSEC algorithm a dnssec-policy key names.
type DNSSECAlgorithm struct {
	// Name is the mnemonic bind-fn renders (ecdsap256sha256).
	Name string
	// Number is the IANA number; a policy may give it as text ("13").
	Number uint8
	// Bits is the fixed key size (a .state file's Length); 0 for RSA,
	// whose size a policy sets (1024–4096, default DefaultRSABits).
	Bits int
	// RSA algorithms take a key size.
	RSA bool
	// Accepted: bind-fn renders it. RSAMD5 and the RSASHA1 variants are
	// refused by modern OpenSSL builds of BIND.
	Accepted bool
	// Generate: bind-fn can make keys of it (Go has no Ed448).
	Generate bool
}

// DNSSEC are the DNSSEC algorithms BIND knows by mnemonic.
var DNSSEC = []DNSSECAlgorithm{
	{Name: "rsamd5", Number: dns.RSAMD5, RSA: true},
	{Name: "rsasha1", Number: dns.RSASHA1, RSA: true},
	{Name: "nsec3rsasha1", Number: dns.RSASHA1NSEC3SHA1, RSA: true},
	{Name: "rsasha256", Number: dns.RSASHA256, RSA: true, Accepted: true, Generate: true},
	{Name: "rsasha512", Number: dns.RSASHA512, RSA: true, Accepted: true, Generate: true},
	{Name: "ecdsap256sha256", Number: dns.ECDSAP256SHA256, Bits: 256, Accepted: true, Generate: true},
	{Name: "ecdsap384sha384", Number: dns.ECDSAP384SHA384, Bits: 384, Accepted: true, Generate: true},
	{Name: "ed25519", Number: dns.ED25519, Bits: 256, Accepted: true, Generate: true},
	{Name: "ed448", Number: dns.ED448, Bits: 456, Accepted: true},
}

// DNSSECAliases are the other mnemonics BIND reads for an algorithm
// (lib/dns/rcode.c SECALGNAMES: ECDSA256, ECDSA384), to the one bind-fn
// renders.
var DNSSECAliases = map[string]string{
	"ecdsa256": "ecdsap256sha256",
	"ecdsa384": "ecdsap384sha384",
}

// DefaultDNSSEC is BIND's algorithm of a dnssec-policy key that names none.
const DefaultDNSSEC = "ecdsap256sha256"

// DefaultRSABits is BIND's default RSA key size in a dnssec-policy.
const DefaultRSABits = 2048

// DNSSECAccepted says which algorithms a policy may name, for messages.
const DNSSECAccepted = "ecdsap256sha256 (recommended), ecdsap384sha384, ed25519, ed448, rsasha256 or rsasha512"

// DNSSECByName finds an algorithm by mnemonic, alias or number (as text),
// in any case; "" is DefaultDNSSEC.
func DNSSECByName(s string) (DNSSECAlgorithm, bool) {
	s = strings.ToLower(s)
	if s == "" {
		s = DefaultDNSSEC
	}
	if a, ok := DNSSECAliases[s]; ok {
		s = a
	}
	for _, a := range DNSSEC {
		if a.Name == s || strconv.Itoa(int(a.Number)) == s {
			return a, true
		}
	}
	return DNSSECAlgorithm{}, false
}

// DNSSECByNumber finds an algorithm by its number.
func DNSSECByNumber(n uint8) (DNSSECAlgorithm, bool) {
	for _, a := range DNSSEC {
		if a.Number == n {
			return a, true
		}
	}
	return DNSSECAlgorithm{}, false
}
