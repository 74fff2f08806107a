// Package golden compares test output with golden files under testdata/ and
// rewrites them with `go test -update`. It imports nothing of the project,
// so every package's tests can use it. A changed golden file is reviewed
// like code.
package golden

import (
	"bytes"
	"flag"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ instead of comparing with them")

// Update reports whether this test run rewrites golden files (-update).
func Update() bool { return *update }

// Check compares got with the golden file at path. With -update it writes
// got there first (creating the directory).
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		write(t, path, got)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read golden file (run go test -update in this package to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

// CheckDir compares files (path relative to dir → content) with the tree
// under dir: the same file names, the same bytes. With -update it replaces
// the tree with files first.
func CheckDir(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for p, b := range files {
			write(t, filepath.Join(dir, p), b)
		}
	}
	want := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		want[rel] = b
		return err
	})
	if err != nil {
		t.Fatalf("%v (run go test -update in this package to create the golden files)", err)
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(files))); diff != "" {
		t.Errorf("files differ from %s (-want +got):\n%s", dir, diff)
	}
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if g, ok := files[p]; ok && !bytes.Equal(want[p], g) {
			t.Errorf("%s differs from the golden file (-want +got; go test -update rewrites it):\n%s", filepath.Join(dir, p), cmp.Diff(string(want[p]), string(g)))
		}
	}
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
