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

	"git.unkin.net/unkin/bind-fn/internal/vocab"
	"github.com/miekg/dns"
)

// DefaultAlgorithm is BIND's default for a dnssec-policy key.
const DefaultAlgorithm = vocab.DefaultDNSSEC

// DefaultRSABits is BIND's default RSA key size in a dnssec-policy.
const DefaultRSABits = vocab.DefaultRSABits

// Algorithm returns the number of a dnssec-policy algorithm bind-fn renders
// (a mnemonic such as ecdsap256sha256, an alias, or its number as text),
// case-insensitively.
func Algorithm(s string) (uint8, error) {
	if a, ok := vocab.DNSSECByName(s); ok && a.Accepted {
		return a.Number, nil
	}
	return 0, fmt.Errorf("unknown DNSSEC algorithm %q: use %s", strings.ToLower(strings.TrimSpace(s)), vocab.DNSSECAccepted)
}

func byNum(n uint8) (vocab.DNSSECAlgorithm, bool) {
	a, ok := vocab.DNSSECByNumber(n)
	return a, ok && a.Accepted
}

// AlgorithmName is BIND's mnemonic of an algorithm number (ECDSAP256SHA256).
func AlgorithmName(n uint8) string {
	if s, ok := dns.AlgorithmToString[n]; ok {
		return s
	}
	return fmt.Sprint(n)
}
