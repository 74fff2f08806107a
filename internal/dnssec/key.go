package dnssec

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Roles of a key in a dnssec-policy.
const (
	RoleKSK = "ksk"
	RoleZSK = "zsk"
	RoleCSK = "csk"
)

// Epoch is the time written into every key's timing metadata and .state:
// a render has no clock, and a fixed time in the past makes named treat
// the keys as published and active from its first start, in every state
// OMNIPRESENT, so it signs with them at once and never makes keys of its
// own (verified on BIND 9.18: "is active in policy", "in stable state
// OMNIPRESENT"). A key with a finite lifetime is therefore due for a roll
// at once; see the README for what BIND does then.
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Key is one DNSSEC key of a zone.
type Key struct {
	// Role is ksk, zsk or csk; empty for a key read without a .state file
	// until it is matched to a policy key (Match).
	Role   string
	DNSKEY *dns.DNSKEY
	// private is the .private file's key lines (format, algorithm and key
	// fields; no timing metadata), as BIND wrote them.
	private []string
	// Lifetime in seconds (0: unlimited), written to the .state file.
	Lifetime uint64
	// Stem is the file name stem Parse read the key under (<Stem>.key).
	Stem string
}

// Spec is one key of a dnssec-policy.
type Spec struct {
	Role      string
	Algorithm uint8
	// Bits of an RSA key (0: DefaultRSABits); ignored otherwise.
	Bits int
	// Lifetime in seconds as BIND counts them, 0 for unlimited: the
	// policy's duration parsed once by the model (model.Duration.Seconds,
	// a month 31 days, a year 365), never read again here.
	Lifetime uint64
}

// Tag is the key tag.
func (k *Key) Tag() uint16 { return k.DNSKEY.KeyTag() }

// Zone is the key's owner name (canonical, trailing dot).
func (k *Key) Zone() string { return dns.CanonicalName(k.DNSKEY.Hdr.Name) }

// SEP reports whether the key has the SEP bit (a KSK or CSK: the parent's
// DS points at it).
func (k *Key) SEP() bool { return k.DNSKEY.Flags&dns.SEP != 0 }

// Bits is the key size as BIND's .state records it (Length).
func (k *Key) Bits() int {
	if a, ok := byNum(k.DNSKEY.Algorithm); ok && a.Bits != 0 {
		return a.Bits
	}
	raw, err := base64.StdEncoding.DecodeString(k.DNSKEY.PublicKey)
	if err != nil || len(raw) < 3 {
		return 0
	}
	// RFC 3110: exponent length (1 or 3 bytes), exponent, modulus.
	el, off := int(raw[0]), 1
	if el == 0 {
		el, off = int(raw[1])<<8|int(raw[2]), 3
	}
	mod := raw[off+el:]
	for len(mod) > 0 && mod[0] == 0 {
		mod = mod[1:]
	}
	if len(mod) == 0 {
		return 0
	}
	n := (len(mod)-1)*8 + 1
	for b := mod[0]; b > 1; b >>= 1 {
		n++
	}
	return n
}

// Base is BIND's file name stem: K<zone>+<alg>+<tag>.
func (k *Key) Base() string {
	return fmt.Sprintf("K%s+%03d+%05d", k.Zone(), k.DNSKEY.Algorithm, k.Tag())
}

// DS is the SHA-256 DS record of the key (RFC 4509), TTL 3600 for pasting.
func (k *Key) DS() *dns.DS {
	ds := k.DNSKEY.ToDS(dns.SHA256)
	ds.Hdr.Ttl = 3600
	return ds
}

// Generate makes a new key for zone per spec, reading key material from r.
// ECDSA and Ed25519 keys are derived from r's bytes alone, so a fixed
// reader makes the same key (golden tests); RSA keys come from Go's RSA
// generator, which always draws on crypto/rand.
func Generate(r io.Reader, zone string, s Spec) (*Key, error) {
	a, ok := byNum(s.Algorithm)
	if !ok {
		return nil, fmt.Errorf("cannot generate a key of algorithm %d: unknown algorithm", s.Algorithm)
	}
	if !a.Generate {
		return nil, fmt.Errorf("cannot generate a %s key: Go has no %s; bring your own key (dnssec-keygen -a %s) in the cluster's DNSSEC Secret", AlgorithmName(s.Algorithm), AlgorithmName(s.Algorithm), AlgorithmName(s.Algorithm))
	}
	flags := uint16(dns.ZONE)
	if s.Role != RoleZSK {
		flags |= dns.SEP
	}
	k := &dns.DNSKEY{
		Hdr:       dns.RR_Header{Name: dns.CanonicalName(zone), Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags:     flags,
		Protocol:  3,
		Algorithm: s.Algorithm,
	}
	var priv crypto.PrivateKey
	switch s.Algorithm {
	case dns.ECDSAP256SHA256, dns.ECDSAP384SHA384:
		curve, n := elliptic.P256(), 32
		if s.Algorithm == dns.ECDSAP384SHA384 {
			curve, n = elliptic.P384(), 48
		}
		p, err := ecdsaKey(r, curve, n)
		if err != nil {
			return nil, err
		}
		pub, err := p.PublicKey.Bytes()
		if err != nil {
			return nil, err
		}
		k.PublicKey = base64.StdEncoding.EncodeToString(pub[1:]) // drop the 0x04 prefix: X || Y
		priv = p
	case dns.ED25519:
		seed := make([]byte, ed25519.SeedSize)
		if _, err := io.ReadFull(r, seed); err != nil {
			return nil, fmt.Errorf("cannot generate a key: %w", err)
		}
		p := ed25519.NewKeyFromSeed(seed)
		k.PublicKey = base64.StdEncoding.EncodeToString(p.Public().(ed25519.PublicKey))
		priv = p
	default: // RSA
		bits := s.Bits
		if bits == 0 {
			bits = DefaultRSABits
		}
		p, err := k.Generate(bits)
		if err != nil {
			return nil, fmt.Errorf("cannot generate a key: %w", err)
		}
		priv = p.(*rsa.PrivateKey)
	}
	key := &Key{Role: s.Role, DNSKEY: k, Lifetime: s.Lifetime}
	key.private = keyLines(k.PrivateKeyString(priv))
	return key, nil
}

// ecdsaKey draws a private scalar of n bytes from r until it is valid
// (non-zero and below the curve order).
func ecdsaKey(r io.Reader, curve elliptic.Curve, n int) (*ecdsa.PrivateKey, error) {
	b := make([]byte, n)
	for range 64 {
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("cannot generate a key: %w", err)
		}
		if p, err := ecdsa.ParseRawPrivateKey(curve, b); err == nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("cannot generate a key: the random source gave no valid scalar in 64 tries")
}

// timing are the .private fields of timing metadata: bind-fn writes its own.
var timing = map[string]bool{
	"created": true, "publish": true, "activate": true, "inactive": true, "delete": true,
	"syncpublish": true, "syncdelete": true, "revoke": true, "dspublish": true, "dsdelete": true,
}

// keyLines keeps the key lines of a .private file (no timing metadata).
func keyLines(text string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, _, ok := strings.Cut(line, ":")
		if line == "" || !ok || timing[strings.ToLower(name)] {
			continue
		}
		out = append(out, line)
	}
	return out
}

func stamp(t time.Time) string { return t.UTC().Format("20060102150405") }

func stampLong(t time.Time) string {
	return stamp(t) + " (" + t.UTC().Format("Mon Jan _2 15:04:05 2006") + ")"
}

// active are the timing fields of a key in use since Epoch; unused the
// one of a key made ahead of a rollover (SuccessorKeyFile).
var (
	active = []string{"Created", "Publish", "Activate"}
	unused = []string{"Created"}
)

// KeyFile is the .key file: comments as dnssec-keygen writes them, then the
// DNSKEY record.
func (k *Key) KeyFile() []byte { return k.keyFile(active) }

// PrivateFile is the .private file: the key lines, then timing metadata.
func (k *Key) PrivateFile() []byte { return k.privateFile(active) }

// SuccessorKeyFile and SuccessorPrivateFile are the files of a key made
// ahead of a rollover: a Created time alone and no .state, which BIND's key
// manager takes as unused (dst_key_is_unused: no timing but Created, every
// state hidden) and, when it rolls a key of the same role and algorithm,
// selects as the successor instead of generating one (lib/dns/keymgr.c
// keymgr_key_rollover; named logs "DNSKEY ... (KSK) selected for policy").
// TestBINDSelectsRenderedSuccessor shows it on BIND 9.18 and 9.20.
func (k *Key) SuccessorKeyFile() []byte { return k.keyFile(unused) }

// SuccessorPrivateFile: see SuccessorKeyFile.
func (k *Key) SuccessorPrivateFile() []byte { return k.privateFile(unused) }

func (k *Key) keyFile(times []string) []byte {
	var b bytes.Buffer
	what := "zone-signing"
	if k.SEP() {
		what = "key-signing"
	}
	fmt.Fprintf(&b, "; This is a %s key, keyid %d, for %s\n", what, k.Tag(), k.Zone())
	for _, f := range times {
		fmt.Fprintf(&b, "; %s: %s\n", f, stampLong(Epoch))
	}
	rr := *k.DNSKEY
	rr.Hdr.Name = k.Zone()
	fmt.Fprintf(&b, "%s\n", rr.String())
	return b.Bytes()
}

func (k *Key) privateFile(times []string) []byte {
	var b bytes.Buffer
	for _, l := range k.private {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for _, f := range times {
		fmt.Fprintf(&b, "%s: %s\n", f, stamp(Epoch))
	}
	return b.Bytes()
}

// StateFile is the .state file of an active key that has been published
// (and, for a KSK or CSK, its DS at the parent) since Epoch.
func (k *Key) StateFile() []byte {
	var b bytes.Buffer
	ksk := k.Role == RoleKSK || k.Role == RoleCSK
	zsk := k.Role == RoleZSK || k.Role == RoleCSK
	t := stamp(Epoch)
	fmt.Fprintf(&b, "; This is the state of key %d, for %s\n", k.Tag(), k.Zone())
	fmt.Fprintf(&b, "Algorithm: %d\nLength: %d\nLifetime: %d\n", k.DNSKEY.Algorithm, k.Bits(), k.Lifetime)
	fmt.Fprintf(&b, "KSK: %s\nZSK: %s\n", yesNo(ksk), yesNo(zsk))
	fmt.Fprintf(&b, "Generated: %s\nPublished: %s\nActive: %s\n", t, t, t)
	fmt.Fprintf(&b, "DNSKEYChange: %s\n", t)
	if ksk {
		fmt.Fprintf(&b, "KRRSIGChange: %s\n", t)
	}
	if zsk {
		fmt.Fprintf(&b, "ZRRSIGChange: %s\n", t)
	}
	if ksk {
		fmt.Fprintf(&b, "DSChange: %s\n", t)
	}
	writeStates(&b, ksk, zsk, "omnipresent")
	return b.Bytes()
}

// writeStates writes a .state file's record states, every one at state:
// DNSKEY, KRRSIG for a KSK, ZRRSIG for a ZSK, DS for a KSK, and the goal.
func writeStates(b *bytes.Buffer, ksk, zsk bool, state string) {
	fmt.Fprintf(b, "DNSKEYState: %s\n", state)
	if ksk {
		fmt.Fprintf(b, "KRRSIGState: %s\n", state)
	}
	if zsk {
		fmt.Fprintf(b, "ZRRSIGState: %s\n", state)
	}
	if ksk {
		fmt.Fprintf(b, "DSState: %s\n", state)
	}
	fmt.Fprintf(b, "GoalState: %s\n", state)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
