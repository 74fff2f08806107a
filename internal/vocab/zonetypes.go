package vocab

import "strings"

// ZoneTypeAliases are the old names BIND still reads for a zone's type
// (ARM, "type": master and slave are synonyms of primary and secondary),
// to the names bind-fn writes and compares.
var ZoneTypeAliases = map[string]string{
	"master": "primary",
	"slave":  "secondary",
}

// ZoneType is a zone statement's type as bind-fn names it: lower case, an
// old name (master, slave) replaced by its current one. A type it does not
// know comes back lower-cased, for the caller to refuse.
func ZoneType(s string) string {
	s = strings.ToLower(s)
	if t, ok := ZoneTypeAliases[s]; ok {
		return t
	}
	return s
}

// PrimariesList is the statement and zone option that names a list of
// primaries; ListAliases its old name, which BIND still reads.
const PrimariesList = "primaries"

// ListAliases are the old names of PrimariesList (masters).
var ListAliases = map[string]string{"masters": PrimariesList}

// IsPrimariesList says whether a statement or zone option name is a
// primaries list, under its current or its old name.
func IsPrimariesList(name string) bool {
	name = strings.ToLower(name)
	return name == PrimariesList || ListAliases[name] == PrimariesList
}
