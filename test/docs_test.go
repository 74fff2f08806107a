package test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocsIndex: docs/README.md names every page under docs/ once, and
// nothing else: a page added without a line in the index, or a line left
// for a page that was removed, fails here.
func TestDocsIndex(t *testing.T) {
	index, err := os.ReadFile(filepath.Join("..", "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^\| \[([a-z0-9-]+\.md)\]\(([a-z0-9-]+\.md)\) \|`).FindAllStringSubmatch(string(index), -1) {
		if m[1] != m[2] {
			t.Errorf("docs/README.md: the line for %s links %s", m[1], m[2])
		}
		listed = append(listed, m[1])
	}
	pages, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, p := range pages {
		if b := filepath.Base(p); b != "README.md" {
			have = append(have, b)
		}
	}
	sort.Strings(listed)
	sort.Strings(have)
	if d := cmp.Diff(have, listed); d != "" {
		t.Errorf("docs/README.md lists other pages than docs/ holds (-on disk +listed):\n%s", d)
	}
}

// TestRelativeLinks: every relative link in README.md, CHANGELOG.md and
// docs/*.md names a file or directory that exists (anchors are not checked).
func TestRelativeLinks(t *testing.T) {
	files := []string{filepath.Join("..", "README.md"), filepath.Join("..", "CHANGELOG.md")}
	pages, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, pages...)
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s links %q, which does not exist", strings.TrimPrefix(f, "../"), target)
			}
		}
	}
}
