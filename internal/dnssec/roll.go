package dnssec

import "bytes"

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
	// no .state): the key named selects (TestBINDSelectsRenderedSuccessor).
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
