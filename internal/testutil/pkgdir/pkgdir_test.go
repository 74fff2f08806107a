package pkgdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCopyReplace(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for f, s := range map[string]string{"a.yaml": "x: 1\nx: 1\n", "sub/b.yaml": "y"} {
		if err := os.WriteFile(filepath.Join(src, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := CopyTemp(t, src)
	Replace(t, filepath.Join(dst, "a.yaml"), "1", "2")
	for f, want := range map[string]string{"a.yaml": "x: 2\nx: 1\n", "sub/b.yaml": "y"} {
		got, err := os.ReadFile(filepath.Join(dst, f))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("%s: the copy, first 1 replaced (-want +got):\n%s", f, diff)
		}
	}
}

func TestRun(t *testing.T) {
	cases := map[string]struct {
		reason   string
		args     []string
		out      string
		wantCode int
	}{
		"Success": {"exit 0 and the output", []string{"-c", "echo out; echo err >&2"}, "out\nerr\n", 0},
		"Exit":    {"an exit code is returned, not a failure", []string{"-c", "echo bad; exit 3"}, "bad\n", 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, code := Run(t, "/bin/sh", tc.args...)
			if diff := cmp.Diff([]any{tc.out, tc.wantCode}, []any{out, code}); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
