package dnssec

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"maps"
	"math/big"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// Suffixes of the three files of a key.
const (
	SuffixKey     = ".key"
	SuffixPrivate = ".private"
	SuffixState   = ".state"
)

// SecretKey is the name of one of k's files in a Secret: BIND's file name
// with the characters a Secret key cannot hold escaped. A Secret key is
// [-._a-zA-Z0-9]+, so `+` becomes `_` (`Kexample.com._013_12345.key`) and
// any other byte of the zone name `_xx` (hex). The agent and the render
// read a key's zone, algorithm and tag from the DNSKEY inside, never from
// the name.
func (k *Key) SecretKey(suffix string) string {
	return fmt.Sprintf("K%s_%03d_%05d%s", escape(k.Zone()), k.DNSKEY.Algorithm, k.Tag(), suffix)
}

func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9', ch == '.', ch == '-':
			b.WriteByte(ch)
		default:
			fmt.Fprintf(&b, "_%02x", ch)
		}
	}
	return b.String()
}

// Files are k's three files under their Secret keys.
func (k *Key) Files() map[string][]byte {
	return map[string][]byte{
		k.SecretKey(SuffixKey):     k.KeyFile(),
		k.SecretKey(SuffixPrivate): k.PrivateFile(),
		k.SecretKey(SuffixState):   k.StateFile(),
	}
}

// Problem is a file that cannot be used as a key, and why.
type Problem struct {
	File string
	Err  error
}

func (p Problem) Error() string { return fmt.Sprintf("%s: %v", p.File, p.Err) }

// Parse reads keys from files (a Secret's data or a directory's files):
// every <stem>.key with its <stem>.private, whatever the stem is (BIND's
// K<zone>+<alg>+<tag>, the Secret form, or any name); <stem>.state gives the
// role when present. A .key without a .private, a .private that does not
// belong to its DNSKEY, and unreadable files are problems. Keys are
// returned sorted by zone, algorithm and tag.
func Parse(files map[string][]byte) ([]*Key, []Problem) {
	var keys []*Key
	var probs []Problem
	names := slices.Sorted(maps.Keys(files))
	for _, n := range names {
		stem, ok := strings.CutSuffix(path.Base(n), SuffixKey)
		if !ok {
			continue
		}
		k, err := parseKey(files[n], files[privateName(n, stem)], files[strings.TrimSuffix(n, SuffixKey)+SuffixState])
		if err != nil {
			probs = append(probs, Problem{File: n, Err: err})
			continue
		}
		k.Stem = strings.TrimSuffix(n, SuffixKey)
		keys = append(keys, k)
	}
	for _, n := range names {
		if stem, ok := strings.CutSuffix(n, SuffixPrivate); ok {
			if _, ok := files[stem+SuffixKey]; !ok {
				probs = append(probs, Problem{File: n, Err: fmt.Errorf("no %s beside it: add the key's public half (its DNSKEY)", path.Base(stem)+SuffixKey)})
			}
		}
	}
	Sort(keys)
	return keys, probs
}

func privateName(keyFile, stem string) string {
	return strings.TrimSuffix(keyFile, SuffixKey) + SuffixPrivate
}

// Sort orders keys by zone, algorithm, role-independent flags (SEP first)
// and tag.
func Sort(keys []*Key) {
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Zone() != b.Zone() {
			return a.Zone() < b.Zone()
		}
		if a.DNSKEY.Algorithm != b.DNSKEY.Algorithm {
			return a.DNSKEY.Algorithm < b.DNSKEY.Algorithm
		}
		if a.SEP() != b.SEP() {
			return a.SEP()
		}
		return a.Tag() < b.Tag()
	})
}

func parseKey(keyFile, privFile, stateFile []byte) (*Key, error) {
	rr, err := readDNSKEY(keyFile)
	if err != nil {
		return nil, err
	}
	if privFile == nil {
		return nil, fmt.Errorf("no .private beside it: a key without its private half cannot sign")
	}
	k := &Key{DNSKEY: rr, private: keyLines(string(privFile))}
	fields := map[string]string{}
	for _, l := range k.private {
		name, v, _ := strings.Cut(l, ":")
		fields[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(v)
	}
	alg, _, _ := strings.Cut(fields["algorithm"], " ")
	if alg != fmt.Sprint(rr.Algorithm) {
		return nil, fmt.Errorf("the .private file is for algorithm %q, the DNSKEY for %d (%s)", alg, rr.Algorithm, AlgorithmName(rr.Algorithm))
	}
	if err := k.checkPrivate(); err != nil {
		return nil, err
	}
	if stateFile != nil {
		st := map[string]string{}
		for _, l := range strings.Split(string(stateFile), "\n") {
			name, v, ok := strings.Cut(l, ":")
			if ok && !strings.HasPrefix(strings.TrimSpace(l), ";") {
				st[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(v)
			}
		}
		switch {
		case st["ksk"] == "yes" && st["zsk"] == "yes":
			k.Role = RoleCSK
		case st["ksk"] == "yes":
			k.Role = RoleKSK
		case st["zsk"] == "yes":
			k.Role = RoleZSK
		}
		if (k.Role == RoleKSK || k.Role == RoleCSK) != k.SEP() && k.Role != "" {
			return nil, fmt.Errorf("the .state file says KSK: %s but the DNSKEY flags are %d", st["ksk"], rr.Flags)
		}
	}
	return k, nil
}

func readDNSKEY(b []byte) (*dns.DNSKEY, error) {
	zp := dns.NewZoneParser(strings.NewReader(string(b)), ".", "")
	if rr, ok := zp.Next(); ok {
		k, isKey := rr.(*dns.DNSKEY)
		if !isKey {
			return nil, fmt.Errorf("holds a %s record: a .key file holds one DNSKEY record", dns.TypeToString[rr.Header().Rrtype])
		}
		if k.Flags&dns.ZONE == 0 || k.Flags&^(dns.ZONE|dns.SEP) != 0 {
			return nil, fmt.Errorf("DNSKEY flags %d: want 257 (KSK/CSK) or 256 (ZSK)", k.Flags)
		}
		return k, nil
	}
	if err := zp.Err(); err != nil {
		return nil, fmt.Errorf("cannot read the DNSKEY: %v", err)
	}
	return nil, fmt.Errorf("holds no DNSKEY record")
}

// checkPrivate proves that the private half belongs to the DNSKEY, for every
// algorithm Go can read (Ed448 keys are taken as they are).
func (k *Key) checkPrivate() error {
	if k.DNSKEY.Algorithm == dns.ED448 {
		return nil
	}
	priv, err := k.DNSKEY.NewPrivateKey(strings.Join(k.private, "\n") + "\n")
	if err != nil {
		return fmt.Errorf("cannot read the .private file: %v", err)
	}
	var pub []byte
	switch p := priv.(type) {
	case *ecdsa.PrivateKey:
		// miekg/dns fills the public half in from the DNSKEY: derive it
		// from the private scalar instead.
		d, err := p.Bytes()
		if err != nil {
			return fmt.Errorf("cannot read the .private file: %v", err)
		}
		q, err := ecdsa.ParseRawPrivateKey(p.Curve, d)
		if err != nil {
			return fmt.Errorf("cannot read the .private file: %v", err)
		}
		b, err := q.PublicKey.Bytes()
		if err != nil {
			return err
		}
		pub = b[1:]
	case ed25519.PrivateKey:
		pub = p.Public().(ed25519.PublicKey)
	case *rsa.PrivateKey:
		// The modulus is taken from the DNSKEY: check the primes make it.
		if len(p.Primes) < 2 || new(big.Int).Mul(p.Primes[0], p.Primes[1]).Cmp(p.N) != 0 {
			return fmt.Errorf("the .private file does not belong to DNSKEY tag %d: its primes do not make the modulus", k.Tag())
		}
		pub = rsaPublic(&p.PublicKey)
	default:
		return fmt.Errorf("cannot read the .private file: unsupported key type %T", crypto.PrivateKey(priv))
	}
	if base64.StdEncoding.EncodeToString(pub) != strings.Join(strings.Fields(k.DNSKEY.PublicKey), "") {
		return fmt.Errorf("the .private file does not belong to DNSKEY tag %d: its public key differs", k.Tag())
	}
	return nil
}

// rsaPublic is the RFC 3110 wire form of an RSA public key.
func rsaPublic(p *rsa.PublicKey) []byte {
	e := bigEndian(p.E)
	var out []byte
	if len(e) < 256 {
		out = append(out, byte(len(e)))
	} else {
		out = append(out, 0, byte(len(e)>>8), byte(len(e)))
	}
	out = append(out, e...)
	return append(out, p.N.Bytes()...)
}

func bigEndian(e int) []byte {
	var b []byte
	for e > 0 {
		b = append([]byte{byte(e)}, b...)
		e >>= 8
	}
	return b
}

// PublicKey reads the public half of a key: a DNSKEY record as in a .key
// file. The key cannot sign; it is for checks and DS records of keys whose
// private halves are managed elsewhere.
func PublicKey(text string) (*Key, error) {
	rr, err := readDNSKEY([]byte(text))
	if err != nil {
		return nil, err
	}
	return &Key{DNSKEY: rr}, nil
}

// InferRoles gives every key read without a .state file a role, as BIND
// would use it: a key without the SEP bit is a ZSK; one with it is a KSK
// when its zone has a ZSK, else a CSK.
func InferRoles(keys []*Key) {
	zsk := map[string]bool{}
	for _, k := range keys {
		if !k.SEP() {
			zsk[k.Zone()] = true
		}
	}
	for _, k := range keys {
		switch {
		case k.Role != "":
		case !k.SEP():
			k.Role = RoleZSK
		case zsk[k.Zone()]:
			k.Role = RoleKSK
		default:
			k.Role = RoleCSK
		}
	}
}
