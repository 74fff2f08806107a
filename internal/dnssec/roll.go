package dnssec

import (
	"bytes"
	"fmt"
)

// Stage is where a key stands in a rollover, as its rendered files say it.
// A render has no clock: every time in the files is Epoch, and named,
// which has one, takes each step from there on its own.
type Stage int

const (
	// Active: published and signing since Epoch, every state omnipresent.
	Active Stage = iota
	// Retiring: active, and retired at Epoch (.state Retired, .private
	// Inactive): named's key manager rolls it at once to a successor of
	// the same role, selecting an unused key of the key-directory before it
	// would make one (TestBINDRollsRetiringKey, BIND 9.18 and 9.20).
	Retiring
	// Successor: made ahead of a rollover, unused (a Created time alone,
	// every state hidden): the key named selects
	// (TestBINDSelectsRenderedSuccessor). It ships a .state so that the
	// agent, which gives a key without one an active .state (keys from
	// dnssec-keygen), installs it unused: an active one named would retire
	// as a second key of the role and make a successor of its own (seen on
	// BIND 9.18: "retire DNSKEY ... created for policy").
	Successor
)

// String names the stage for messages and tests.
func (s Stage) String() string {
	return [...]string{"active", "retiring", "successor"}[s]
}

// StageFiles are k's files, under their Secret keys, for a key at stage s.
func (k *Key) StageFiles(s Stage) map[string][]byte {
	switch s {
	case Retiring:
		return map[string][]byte{
			k.SecretKey(SuffixKey):     k.keyFile(retired),
			k.SecretKey(SuffixPrivate): k.privateFile(retired),
			k.SecretKey(SuffixState):   k.retiringStateFile(),
		}
	case Successor:
		return map[string][]byte{
			k.SecretKey(SuffixKey):     k.SuccessorKeyFile(),
			k.SecretKey(SuffixPrivate): k.SuccessorPrivateFile(),
			k.SecretKey(SuffixState):   k.SuccessorStateFile(),
		}
	}
	return k.Files()
}

// retired are the timing fields of a retiring key (BIND's .private name
// for the retire time is Inactive, its .state name Retired).
var retired = []string{"Created", "Publish", "Activate", "Inactive"}

func (k *Key) retiringStateFile() []byte {
	t := stamp(Epoch)
	return bytes.Replace(k.StateFile(), []byte("Active: "+t+"\n"), []byte("Active: "+t+"\nRetired: "+t+"\n"), 1)
}

// SuccessorStateFile is the .state of an unused key (SuccessorKeyFile):
// generated at Epoch, every state hidden, which BIND's dst_key_is_unused
// takes as unused.
func (k *Key) SuccessorStateFile() []byte {
	var b bytes.Buffer
	ksk := k.Role == RoleKSK || k.Role == RoleCSK
	zsk := k.Role == RoleZSK || k.Role == RoleCSK
	fmt.Fprintf(&b, "; This is the state of key %d, for %s\n", k.Tag(), k.Zone())
	fmt.Fprintf(&b, "Algorithm: %d\nLength: %d\nLifetime: %d\n", k.DNSKEY.Algorithm, k.Bits(), k.Lifetime)
	fmt.Fprintf(&b, "KSK: %s\nZSK: %s\n", yesNo(ksk), yesNo(zsk))
	fmt.Fprintf(&b, "Generated: %s\n", stamp(Epoch))
	writeStates(&b, ksk, zsk, "hidden")
	return b.Bytes()
}

// Roll is one rollover of a zone's key as the render records it between
// renders (layout.DNSSECRolloversAnnotation): the user's label, the key
// it retires and the successor the render made for it, and whether the
// user has finished it.
type Roll struct {
	Role  string `json:"role"`
	Label string `json:"label"`
	Old   uint16 `json:"old"`
	New   uint16 `json:"new"`
	Done  bool   `json:"done,omitempty"`
}

// RollRecord is every signed zone's rollovers (the last one per role), by
// canonical zone name.
type RollRecord map[string][]Roll

// NeedsRollover reports whether the agent must start a rollover of an
// installed key with `rndc dnssec -rollover -key <tag> <zone>`: the
// Secret's .state (secret) retires the key, and named's own .state in the
// key-directory (disk) has not begun to: no Retired time, no Successor. A
// named that starts from the Secret's files rolls by itself
// (TestBINDRollsRetiringKey); a running one keeps its own .state, which
// the agent never overwrites.
func NeedsRollover(secret, disk []byte) bool {
	return hasField(secret, "Retired") && !hasField(disk, "Retired") && !hasField(disk, "Successor")
}

// hasField reports whether a .state file sets field (a "Name: value" line
// outside comments).
func hasField(state []byte, field string) bool {
	for _, line := range bytes.Split(state, []byte("\n")) {
		name, _, ok := bytes.Cut(bytes.TrimSpace(line), []byte(":"))
		if ok && !bytes.HasPrefix(name, []byte(";")) && bytes.EqualFold(bytes.TrimSpace(name), []byte(field)) {
			return true
		}
	}
	return false
}
