// Package pkgdir is what the CLI tests do to a package directory: copy it,
// edit a file of it, and run a command-line tool on it. It is a leaf
// (the standard library only), shared by cmd/bind-fn's tests and test/'s.
package pkgdir

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Copy copies the tree src into dst (created, or empty).
func Copy(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// CopyTemp copies the tree src into a new directory of t's and returns
// it; it keeps src's base name.
func CopyTemp(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	Copy(t, src, dst)
	return dst
}

// Replace replaces the first old in the file at path with new; old must
// be there.
func Replace(t testing.TB, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Run runs bin with args and returns its output (stdout and stderr
// interleaved) and exit code; a command that cannot run at all fails t.
func Run(t testing.TB, bin string, args ...string) (out string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return b.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %s: %v", filepath.Base(bin), strings.Join(args, " "), err)
	}
	return b.String(), 0
}

// MustRun is Run for a command that must succeed (exit 0): anything else
// fails t with its output.
func MustRun(t testing.TB, bin string, args ...string) string {
	t.Helper()
	out, code := Run(t, bin, args...)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\n%s", filepath.Base(bin), strings.Join(args, " "), code, out)
	}
	return out
}
