package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }
func (r *recorder) Fatal(...any)          { r.failed = true; panic(r) }

// run calls f with r and reports whether it failed (Fatal ends f early).
func (r *recorder) run(f func(testing.TB)) (failed bool) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	f(r)
	return r.failed
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		path   string
		got    string
		fail   bool
	}{
		"Same":    {reason: "equal bytes pass", path: path, got: "same\n"},
		"Differs": {reason: "other bytes fail", path: path, got: "other\n", fail: true},
		"Missing": {reason: "a missing golden file fails", path: filepath.Join(dir, "none"), got: "x", fail: true},
	}
	for name, tc := range cases {
		r := &recorder{TB: t}
		if got := r.run(func(tb testing.TB) { Check(tb, tc.path, []byte(tc.got)) }); got != tc.fail {
			t.Errorf("%s: %s: failed = %v, want %v", name, tc.reason, got, tc.fail)
		}
	}
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "b"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		files  map[string][]byte
		fail   bool
	}{
		"Same":   {reason: "the same tree passes", files: map[string][]byte{"sub/b": []byte("b")}},
		"Bytes":  {reason: "other bytes fail", files: map[string][]byte{"sub/b": []byte("c")}, fail: true},
		"Extra":  {reason: "a file the golden tree lacks fails", files: map[string][]byte{"sub/b": []byte("b"), "c": nil}, fail: true},
		"Absent": {reason: "a golden file not produced fails", files: map[string][]byte{}, fail: true},
	}
	for name, tc := range cases {
		r := &recorder{TB: t}
		if got := r.run(func(tb testing.TB) { CheckDir(tb, dir, tc.files) }); got != tc.fail {
			t.Errorf("%s: %s: failed = %v, want %v", name, tc.reason, got, tc.fail)
		}
	}
}
