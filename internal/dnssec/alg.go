// Package dnssec makes and reads the signing keys of DNSSEC zones in the
// files BIND's dnssec-policy keeps in its key-directory:
// K<zone>+<alg>+<tag>.key (the DNSKEY), .private (the private key, format
// v1.3) and .state (the key manager's state). It is pure: new key material
// comes only from the io.Reader it is given (crypto/rand in production).
//
// Verified on BIND 9.18 (see README "DNSSEC" and test/multipod): named
// adopts pre-placed keys that carry timing metadata (Created, Publish,
// Activate) and a .state file, and reports them "in stable state
// OMNIPRESENT"; keys without timing metadata (dnssec-keygen -C) are ignored
// and named generates new ones.
package dnssec

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// DefaultAlgorithm is BIND's default for a dnssec-policy key.
const DefaultAlgorithm = "ecdsap256sha256"

// algorithm describes a DNSSEC algorithm bind-fn knows.
type algorithm struct {
	num uint8
	// bits is the fixed key size (the .state Length); 0 for RSA.
	bits int
	// gen: bind-fn can generate keys of it (Go has no Ed448).
	gen bool
}

var algorithms = map[string]algorithm{
	"rsasha256":       {num: dns.RSASHA256, gen: true},
	"rsasha512":       {num: dns.RSASHA512, gen: true},
	"ecdsap256sha256": {num: dns.ECDSAP256SHA256, bits: 256, gen: true},
	"ecdsap384sha384": {num: dns.ECDSAP384SHA384, bits: 384, gen: true},
	"ed25519":         {num: dns.ED25519, bits: 256, gen: true},
	"ed448":           {num: dns.ED448, bits: 456},
}

// DefaultRSABits is BIND's default RSA key size in a dnssec-policy.
const DefaultRSABits = 2048

// Algorithm returns the number of a dnssec-policy algorithm (a mnemonic
// such as ecdsap256sha256, or its number as text), case-insensitively.
func Algorithm(s string) (uint8, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		s = DefaultAlgorithm
	}
	if a, ok := algorithms[s]; ok {
		return a.num, nil
	}
	for _, a := range algorithms {
		if fmt.Sprint(a.num) == s {
			return a.num, nil
		}
	}
	return 0, fmt.Errorf("unknown DNSSEC algorithm %q: use ecdsap256sha256 (recommended), ecdsap384sha384, ed25519, ed448, rsasha256 or rsasha512", s)
}

func byNum(n uint8) (algorithm, bool) {
	for _, a := range algorithms {
		if a.num == n {
			return a, true
		}
	}
	return algorithm{}, false
}

// AlgorithmName is BIND's mnemonic of an algorithm number (ECDSAP256SHA256).
func AlgorithmName(n uint8) string {
	if s, ok := dns.AlgorithmToString[n]; ok {
		return s
	}
	return fmt.Sprint(n)
}
