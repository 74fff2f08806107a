package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// hasDuplicate is the authority: the YAML library's full parse.
func hasDuplicate(doc []byte) (bool, bool) {
	var n yaml.Node
	if err := yaml.Unmarshal(doc, &n); err != nil {
		return false, false
	}
	found := false
	walkDuplicates(&n, "", func(string, int, int) { found = true })
	return found, true
}

// TestPrefilterNeverMissesDuplicates: wherever the full parse finds a
// duplicate key, the pre-filter says "maybe" -- on every YAML document of
// the repository's testdata and examples, each also with a duplicate key
// added at several places; and the pre-filter skips the full parse for the
// plain documents that make up a package.
func TestPrefilterNeverMissesDuplicates(t *testing.T) {
	var docs [][]byte
	for _, root := range []string{"../..", "../../examples"} {
		_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() && (info.Name() == ".git" || info.Name() == "bin") {
				if info != nil && info.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(p, ".yaml") && info.Size() < 1<<20 {
				b, _ := os.ReadFile(p)
				for _, d := range strings.Split(string(b), "\n---") {
					docs = append(docs, []byte(d))
				}
			}
			return nil
		})
	}
	docs = append(docs,
		[]byte("spec:\n  records:\n  - name: a\n  records:\n  - name: b\n"),
		[]byte("spec: {zoneName: a, zoneName: b}\n"),
		[]byte("metadata:\n  annotations: {}\n  \"annotations\": {}\n"),
		[]byte("spec:\n  records:\n  - {name: a, type: A, name: b}\n"),
		[]byte("a:\n  - - x: 1\n      x: 2\n"),
	)
	if len(docs) < 200 {
		t.Fatalf("only %d documents", len(docs))
	}
	skipped, checked := 0, 0
	for _, d := range docs {
		variants := [][]byte{d}
		lines := strings.Split(string(d), "\n")
		for i, l := range lines {
			if k, _, ok := blockKey(strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(l, " "), "- "), " ")); ok && k != "" && i%3 == 0 {
				// repeat this key line right after itself (same mapping)
				ind := l[:len(l)-len(strings.TrimLeft(l, " -"))]
				ind = strings.Repeat(" ", len(ind))
				dup := append(append(append([]string{}, lines[:i+1]...), ind+k+": dup"), lines[i+1:]...)
				variants = append(variants, []byte(strings.Join(dup, "\n")))
			}
		}
		for _, v := range variants {
			full, ok := hasDuplicate(v)
			if !ok {
				continue
			}
			maybe := mayHaveDuplicateKeys(v)
			if full && !maybe {
				t.Errorf("the pre-filter misses a duplicate in:\n%s", v)
			}
			if !full {
				checked++
				if !maybe {
					skipped++
				}
			}
		}
	}
	t.Logf("%d documents without duplicates, the full parse skipped for %d", checked, skipped)
	if skipped < checked/2 {
		t.Errorf("the pre-filter skips only %d of %d documents without duplicates", skipped, checked)
	}
}
