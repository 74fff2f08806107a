package test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestPlanKpt runs `bind-fn plan` on a package the real kpt CLI rendered:
// with the edited inputs before `kpt fn render` (the output in the package
// is the old render), and after it against the committed package in git
// (--git HEAD --rendered). Both plans are the same, and once rendered the
// package plans no change.
func TestPlanKpt(t *testing.T) {
	kpt := bindtools.Bin(t, "kpt")
	bindfn := bindtools.Bin(t, "bind-fn")
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is missing: apt-get install git")
	}
	dir := kptPackage(t, "authoritative")
	repo := filepath.Dir(dir)
	run := func(name string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		code := 0
		if ee != nil {
			code = ee.ExitCode()
		}
		if code == 1 {
			t.Fatalf("%s %v failed:\n%s%s", name, args, out.String(), errb.String())
		}
		return out.String(), code
	}
	run(kpt, "fn", "render", "--allow-exec", dir)
	run("git", "init", "-q")
	run("git", "add", ".")
	run("git", "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "rendered")

	p := filepath.Join(dir, "records.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(`"198.51.100.30"`), []byte(`"198.51.100.31"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	before, code := run(bindfn, "plan", dir)
	if code != 2 || !strings.Contains(before, "+ blog.example.com. 3600 A 198.51.100.31") || !strings.Contains(before, "serial 1 → 2") {
		t.Fatalf("plan of the edited package: exit %d\n%s", code, before)
	}
	run(kpt, "fn", "render", "--allow-exec", dir)
	after, code := run(bindfn, "plan", "--git", "HEAD", "--rendered", dir)
	if code != 2 {
		t.Fatalf("plan against HEAD after kpt fn render: exit %d\n%s", code, after)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("the plan before kpt fn render and the plan of kpt's output differ (-before +after):\n%s", d)
	}
	if out, code := run(bindfn, "plan", dir); code != 0 {
		t.Errorf("a freshly rendered package plans a change: exit %d\n%s", code, out)
	}
}
