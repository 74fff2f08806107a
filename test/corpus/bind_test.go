package corpus

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// This file is the only place the tests choose a BIND version: a small
// helper, to be replaced by bindtools' per-version commands when they land.

// version is one BIND release the verdicts are taken from.
type version struct {
	name string
	// cmd runs a BIND program of this release, off the network.
	cmd func(t testing.TB, prog string, args ...string) *exec.Cmd
}

// envRoot920 names a Debian trixie root whose /usr holds BIND 9.20.
const envRoot920 = "BINDFN_BIND920_ROOT"

func versions(t testing.TB) []version {
	t.Helper()
	bindtools.RequireBIND(t)
	bindtools.RequireRoot(t)
	root := os.Getenv(envRoot920)
	if root == "" {
		root = "/tmp/r920/root"
	}
	if _, err := os.Stat(filepath.Join(root, "usr/bin/named-checkconf")); err != nil {
		t.Fatalf("BIND 9.20 is missing: no %s/usr/bin/named-checkconf (a Debian trixie root with bind9-utils; set %s to it)", root, envRoot920)
	}
	return []version{
		{name: "9.18", cmd: func(t testing.TB, prog string, args ...string) *exec.Cmd {
			return bindtools.Offline(t, bindtools.BINDPath(t, prog), args...)
		}},
		{name: "9.20", cmd: func(t testing.TB, prog string, args ...string) *exec.Cmd {
			// The host is merged-usr: binding the root's /usr over /usr
			// swaps every program and library; host paths stay.
			c := exec.Command("unshare", append([]string{"-m", "-n", "--propagation", "private", "sh", "-c",
				`mount --bind "$BINDFN_USR" /usr && exec "$@"`, "sh", prog}, args...)...)
			c.Env = append(os.Environ(), "BINDFN_USR="+filepath.Join(root, "usr"))
			return c
		}},
	}
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
