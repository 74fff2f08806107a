package corpus

import (
	"os/exec"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// version is one BIND release the verdicts are taken from.
type version struct {
	name string
	// cmd runs a BIND program of this release, off the network.
	cmd func(t testing.TB, prog string, args ...string) *exec.Cmd
}

// versions are bindtools.Releases (9.18, the host's; 9.20, the one bind-fn
// ships), each required.
func versions(t testing.TB) []version {
	t.Helper()
	bindtools.RequireRoot(t)
	var out []version
	for _, r := range bindtools.Releases {
		bindtools.RequireRelease(t, r)
		out = append(out, version{name: r.Name, cmd: r.Offline})
	}
	return out
}

// run runs a command and returns its combined output and whether it
// succeeded; a failure to start is fatal.
func run(t testing.TB, c *exec.Cmd) (string, bool) {
	t.Helper()
	out, err := c.CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("%s: %v", strings.Join(c.Args, " "), err)
	}
	return string(out), err == nil
}

// stdout runs a command and returns its standard output and whether it
// succeeded; a failure to start is fatal.
func stdout(t testing.TB, c *exec.Cmd) (string, bool) {
	t.Helper()
	out, err := c.Output()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("%s: %v", strings.Join(c.Args, " "), err)
	}
	return string(out), err == nil
}
