package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// The corpus tests' lists of allowed differences are read from the one
// table of deliberate differences in docs/validation.md ("Deliberate
// differences"): each row's last column lists its corpus entries as
// `kind:key@releases`, and the row's "why" is the reason. Nothing else
// lists them, so the table and the tests cannot drift.

// diffTableHeading is the section that holds the table.
const diffTableHeading = "## Deliberate differences"

// diffKinds are the corpus entry kinds the table may use.
var diffKinds = map[string]bool{"zone": true, "system": true, "policy": true, "selfcheck": true, "systemself": true}

var (
	diffTableOnce sync.Once
	diffTable     map[string]map[string]zoneDiff
	diffTableErr  error
)

// knownDiffs is the table's entries of one kind, by key.
func knownDiffs(t testing.TB, kind string) map[string]zoneDiff {
	t.Helper()
	diffTableOnce.Do(func() {
		var doc []byte
		doc, diffTableErr = os.ReadFile(filepath.Join(bindtools.RepoRoot(t), "docs", "validation.md"))
		if diffTableErr == nil {
			diffTable, diffTableErr = parseDiffTable(string(doc))
		}
	})
	if diffTableErr != nil {
		t.Fatalf("docs/validation.md: %v", diffTableErr)
	}
	return diffTable[kind]
}

// knownWhy is the reason the table gives for an entry, and whether it
// lists it.
func knownWhy(t testing.TB, kind, key string) (string, bool) {
	d, ok := knownDiffs(t, kind)[key]
	return d.reason, ok
}

// parseDiffTable reads the table under diffTableHeading: its header row
// must end in the columns why and corpus.
func parseDiffTable(doc string) (map[string]map[string]zoneDiff, error) {
	_, rest, ok := strings.Cut(doc, "\n"+diffTableHeading+"\n")
	if !ok {
		return nil, fmt.Errorf("no section %q", diffTableHeading)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	out := map[string]map[string]zoneDiff{}
	header := true
	rows := 0
	for n, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := splitRow(line)
		if header {
			if len(cells) != 5 || cells[3] != "why" || cells[4] != "corpus" {
				return nil, fmt.Errorf("%s: the table's columns are %q; want input, BIND, bind-fn, why, corpus", diffTableHeading, cells)
			}
			header = false
			continue
		}
		if strings.Trim(line, "|- ") == "" {
			continue
		}
		if len(cells) != 5 {
			return nil, fmt.Errorf("%s, row %d: %d cells, want 5: %s", diffTableHeading, n, len(cells), line)
		}
		rows++
		why := cells[3]
		if cells[4] == "" {
			continue
		}
		for _, e := range strings.Split(cells[4], ",") {
			e = strings.TrimSpace(e)
			if !strings.HasPrefix(e, "`") || !strings.HasSuffix(e, "`") {
				// a release list continues the entry: 9.18,9.20
				return nil, fmt.Errorf("%s, row %d: corpus entry %q is not `kind:key@releases`", diffTableHeading, n, e)
			}
			kind, kv, ok1 := strings.Cut(strings.Trim(e, "`"), ":")
			key, rels, ok2 := strings.Cut(kv, "@")
			if !ok1 || !ok2 || !diffKinds[kind] || key == "" {
				return nil, fmt.Errorf("%s, row %d: corpus entry %s is not `kind:key@releases` with a kind of zone, system, policy, selfcheck, systemself", diffTableHeading, n, e)
			}
			var versions []string
			for _, r := range strings.Split(rels, "+") {
				if r != "9.18" && r != "9.20" {
					return nil, fmt.Errorf("%s, row %d: corpus entry %s: release %q is not 9.18 or 9.20", diffTableHeading, n, e, r)
				}
				versions = append(versions, r)
			}
			if out[kind] == nil {
				out[kind] = map[string]zoneDiff{}
			}
			if _, dup := out[kind][key]; dup {
				return nil, fmt.Errorf("%s, row %d: corpus entry %s is listed twice", diffTableHeading, n, e)
			}
			out[kind][key] = zoneDiff{versions: versions, reason: why}
		}
	}
	if rows == 0 {
		return nil, fmt.Errorf("%s: no table", diffTableHeading)
	}
	return out, nil
}

// splitRow splits a Markdown table row at its unescaped pipes, outside
// code spans.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	code := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
			continue
		case c == '`':
			code = !code
		case c == '|' && !code:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// TestDifferenceTable: the table reads, every corpus kind the tests use
// has entries, and a malformed entry is an error, not an entry dropped.
func TestDifferenceTable(t *testing.T) {
	for _, kind := range []string{"zone", "system", "policy", "selfcheck"} {
		if len(knownDiffs(t, kind)) == 0 {
			t.Errorf("the table lists no %s entry", kind)
		}
	}
	bad := map[string]string{
		"no backticks": "| a | b | c | d | zone:x.db@9.18 |",
		"unknown kind": "| a | b | c | d | `corpus:x.db@9.18` |",
		"bad release":  "| a | b | c | d | `zone:x.db@9.16` |",
		"no release":   "| a | b | c | d | `zone:x.db` |",
		"four cells":   "| a | b | c | `zone:x.db@9.18` |",
		"listed twice": "| a | b | c | d | `zone:x.db@9.18`, `zone:x.db@9.20` |",
	}
	for name, row := range bad {
		doc := "\n" + diffTableHeading + "\n\n| input | BIND | bind-fn | why | corpus |\n|---|---|---|---|---|\n" + row + "\n"
		if _, err := parseDiffTable(doc); err == nil {
			t.Errorf("%s: %q parsed without an error", name, row)
		}
	}
}
