package dnssec

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// ZoneKeys returns the keys of zone under a policy's specs: for every spec,
// the first kept key that matches it (same role, algorithm and RSA size),
// else a new key from r (nil r: an error). stray are the kept keys that
// match no spec: the policy and the keys disagree, which the caller reports
// (named would ignore them and make keys of its own).
func ZoneKeys(zone string, specs []Spec, kept []*Key, r io.Reader) (keys, stray []*Key, err error) {
	used := make([]bool, len(kept))
	tags := map[uint16]bool{}
	for _, k := range kept {
		tags[k.Tag()] = true
	}
	for _, s := range specs {
		found := false
		for i, k := range kept {
			if used[i] || !s.matches(k) {
				continue
			}
			used[i], found = true, true
			kk := *k
			kk.Role, kk.Lifetime = s.Role, s.Lifetime
			keys = append(keys, &kk)
			break
		}
		if found {
			continue
		}
		if r == nil {
			return nil, nil, fmt.Errorf("no kept %s key for zone %q and no random source", s.Role, zone)
		}
		for try := 0; ; try++ {
			k, err := Generate(r, zone, s)
			if err != nil {
				return nil, nil, err
			}
			// Two keys of a zone with one tag confuse resolvers and named.
			if !tags[k.Tag()] {
				tags[k.Tag()] = true
				keys = append(keys, k)
				break
			}
			if try > 16 {
				return nil, nil, fmt.Errorf("cannot generate a key for zone %q with a free key tag", zone)
			}
		}
	}
	for i, k := range kept {
		if !used[i] {
			stray = append(stray, k)
		}
	}
	Sort(keys)
	return keys, stray, nil
}

func (s Spec) matches(k *Key) bool {
	if k.DNSKEY.Algorithm != s.Algorithm {
		return false
	}
	if k.Role != "" && k.Role != s.Role {
		return false
	}
	if k.Role == "" && k.SEP() != (s.Role != RoleZSK) {
		return false
	}
	if a, ok := byNum(s.Algorithm); ok && a.Bits == 0 {
		bits := s.Bits
		if bits == 0 {
			bits = DefaultRSABits
		}
		return k.Bits() == bits
	}
	return true
}

// String describes a spec as a dnssec-policy key line does.
func (s Spec) String() string {
	str := s.Role + " " + strings.ToLower(AlgorithmName(s.Algorithm))
	if s.Bits != 0 {
		str += " " + strconv.Itoa(s.Bits)
	}
	return str
}

// Describe names a key for messages: "KSK example.com/ECDSAP256SHA256/12345".
func (k *Key) Describe() string {
	role := strings.ToUpper(k.Role)
	if role == "" {
		role = "ZSK"
		if k.SEP() {
			role = "KSK"
		}
	}
	return fmt.Sprintf("%s %s/%s/%d", role, strings.TrimSuffix(k.Zone(), "."), AlgorithmName(k.DNSKEY.Algorithm), k.Tag())
}

// DSSet is the SHA-256 DS record of every KSK or CSK among keys.
func DSSet(keys []*Key) []*dns.DS {
	var out []*dns.DS
	for _, k := range keys {
		if k.SEP() {
			out = append(out, k.DS())
		}
	}
	return out
}
