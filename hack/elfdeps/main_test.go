package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lddPaths is what ldd (the loader itself) reports prog loads, the vDSO left out.
func lddPaths(t *testing.T, prog string) []string {
	t.Helper()
	out, err := exec.Command("ldd", prog).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", prog, err)
	}
	var paths []string
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			paths = append(paths, f[2])
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			paths = append(paths, f[0])
		}
	}
	sort.Strings(paths)
	return paths
}

// TestMatchesLdd: on the host's own root, elfdeps finds what the loader
// loads, path for path, for programs with a few levels of libraries.
func TestMatchesLdd(t *testing.T) {
	for _, prog := range []string{"/usr/bin/ls", "/usr/bin/curl", "/usr/bin/git"} {
		if _, err := os.Stat(prog); err != nil {
			continue // not every host has every program; ls is always there
		}
		t.Run(filepath.Base(prog), func(t *testing.T) {
			deps, err := Deps("/", []string{prog})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range deps {
				got = append(got, d.Path)
			}
			if diff := cmp.Diff(lddPaths(t, prog), got); diff != "" {
				t.Errorf("elfdeps %s (-ldd +elfdeps):\n%s", prog, diff)
			}
		})
	}
}

// TestResolveStaysInRoot: an absolute symlink inside the root resolves
// against the root, not the host.
func TestResolveStaysInRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "usr", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr", "lib", "libx.so.1.2"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"lib": "usr/lib", "usr/lib/libx.so.1": "/usr/lib/libx.so.1.2"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := resolve(root, "/lib/libx.so.1")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "usr", "lib", "libx.so.1.2"); got != want {
		t.Errorf("resolve = %s, want %s", got, want)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if got, err := resolve(root, "/escape"); err == nil {
		t.Errorf("resolve(/escape -> /etc/passwd) = %s, want an error: the root has no /etc/passwd", got)
	}
}

// TestMissingLibrary: a program whose library is not in the root is an
// error naming both.
func TestMissingLibrary(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/usr/bin/ls")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr", "bin", "ls"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Deps(root, []string{"/usr/bin/ls"})
	if err == nil || !strings.Contains(err.Error(), "cannot find") || !strings.Contains(err.Error(), "ls") {
		t.Errorf("Deps on a root without libraries: error = %v, want one naming the missing file and ls", err)
	}
}
