package bindtools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Release is one BIND release the tests run. bind-fn renders for both:
// 9.20 is the release it ships (its image is built from the same Debian
// trixie packages), 9.18 the one a rolling upgrade leaves behind for a while.
type Release struct {
	// Name is the release branch: "9.18" or "9.20".
	Name string
	// link is the entry under the repository's bin/ that points at a root
	// file system whose /usr holds this release (hack/install-bind.sh); ""
	// for the host's own BIND (Debian's, found through PATH).
	link string
}

// The releases, oldest first. Releases is every release a checker-level
// test (NamedCheckconf, NamedCheckzone) runs on.
var (
	BIND918  = Release{Name: "9.18"}
	BIND920  = Release{Name: "9.20", link: "bind-9.20"}
	Releases = []Release{BIND918, BIND920}
)

// EnvRelease picks the release that tests which run named itself start
// (the multi-pod lab, the differential test, the agent's real-named tests):
// 9.20 (what bind-fn ships) unless set; `make test` runs those packages a
// second time with BINDFN_BIND=9.18.
const EnvRelease = "BINDFN_BIND"

// EnvRoot920 overrides where the BIND 9.20 root is (default bin/bind-9.20).
const EnvRoot920 = "BINDFN_BIND920_ROOT"

const install920Hint = "build the BIND 9.20 root with `make tools` (hack/install-bind.sh: Debian trixie's bind9 " +
	"through mmdebstrap, linked as bin/bind-9.20), or set " + EnvSkipBIND + "=1 to skip tests that need BIND"

// ReleaseNamed returns the release called name ("9.18", "9.20").
func ReleaseNamed(name string) (Release, error) {
	for _, r := range Releases {
		if r.Name == name {
			return r, nil
		}
	}
	var names []string
	for _, r := range Releases {
		names = append(names, r.Name)
	}
	return Release{}, fmt.Errorf("unknown BIND release %q: want one of %s", name, strings.Join(names, ", "))
}

// Current is the release chosen by BINDFN_BIND (9.20 when unset), after
// RequireRelease.
func Current(t testing.TB) Release {
	t.Helper()
	r := BIND920
	if v := os.Getenv(EnvRelease); v != "" {
		var err error
		if r, err = ReleaseNamed(v); err != nil {
			t.Fatalf("%s: %v", EnvRelease, err)
		}
	}
	RequireRelease(t, r)
	return r
}

// String is "BIND 9.20".
func (r Release) String() string { return "BIND " + r.Name }

// Host reports whether the release is the host's own BIND.
func (r Release) Host() bool { return r.link == "" }

// root is the release's root file system ("" for the host).
func (r Release) root(t testing.TB) (string, error) {
	if r.Host() {
		return "", nil
	}
	var dir string
	if v := os.Getenv(EnvRoot920); v != "" {
		dir = v
	} else {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", r.link)
	}
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("the %s root is missing: %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "usr/sbin/named")); err != nil {
		return "", fmt.Errorf("the %s root %s has no usr/sbin/named", r, dir)
	}
	return dir, nil
}

func repoRoot() (string, error) {
	rootOnce.Do(func() {
		wd, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		rootDir, rootErr = findRoot(wd)
	})
	return rootDir, rootErr
}

// RequireRelease fails the test unless the release's programs are installed
// (it skips instead when BINDFN_SKIP_BIND=1).
func RequireRelease(t testing.TB, r Release) {
	t.Helper()
	if r.Host() {
		RequireBIND(t)
		return
	}
	RequireRoot(t) // its programs run behind a mount of /usr
	if _, err := r.root(t); err != nil {
		if skipping(EnvSkipBIND) {
			t.Skipf("%s=1 and %v", EnvSkipBIND, err)
		}
		t.Fatalf("this test needs %s: %v; %s", r, err, install920Hint)
	}
}

// Usr is the directory to bind-mount over /usr so that /usr/sbin/named
// is this release's ("" for the host's release, which needs no mount).
// Every host path outside /usr stays visible.
func (r Release) Usr(t testing.TB) string {
	t.Helper()
	if r.Host() {
		return ""
	}
	RequireRelease(t, r)
	root, err := r.root(t)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "usr")
}

// Prog is the absolute path of one of the release's programs as it runs
// (inside the /usr mount for a root release).
func (r Release) Prog(t testing.TB, name string) string {
	t.Helper()
	if r.Host() {
		return BINDPath(t, name)
	}
	usr := r.Usr(t)
	for _, d := range []string{"sbin", "bin"} {
		if fi, err := os.Stat(filepath.Join(usr, d, name)); err == nil && fi.Mode().IsRegular() {
			return filepath.Join("/usr", d, name)
		}
	}
	t.Fatalf("%s has no program %q under %s", r, name, usr)
	return ""
}

// UsrScript binds $BINDFN_USR over /usr (read-only) when it is set, then
// execs its arguments: the prefix that runs a program of a root release.
// It must run in a private mount namespace.
// (One mount call: the root need not have a mount program of its own.)
const UsrScript = `set -e; if [ -n "$BINDFN_USR" ]; then mount --bind -o ro "$BINDFN_USR" /usr; fi; exec "$@"`

// Argv is the command line that runs the release's program name with args:
// the program itself for the host's release; for a root release, a private
// mount namespace (unshare -m) with the root's /usr bound over /usr. The
// process keeps its PID through every exec, so signals reach the program.
// offline adds a fresh, empty network namespace (unshare -n).
func (r Release) Argv(t testing.TB, offline bool, name string, args ...string) []string {
	t.Helper()
	prog := r.Prog(t, name)
	unshare, err := exec.LookPath("unshare")
	if err != nil && (offline || !r.Host()) {
		t.Fatalf("unshare (util-linux) is missing: apt-get install util-linux")
	}
	var argv []string
	switch {
	case r.Host() && !offline:
		return append([]string{prog}, args...)
	case r.Host():
		argv = []string{unshare, "-n", "--", prog}
	default:
		argv = []string{unshare, "-m", "--propagation", "private"}
		if offline {
			argv = append(argv, "-n")
		}
		argv = append(argv, "--", "/bin/sh", "-c", UsrScript, "sh", prog)
	}
	return append(argv, args...)
}

// Command runs the release's program name: a host program directly; a root
// release's behind its /usr mount (root needed).
func (r Release) Command(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	argv := r.Argv(t, false, name, args...)
	return r.cmd(t, argv)
}

// Offline is Command in a fresh, empty network namespace: BIND's checkers
// look up out-of-zone names through the system resolver. As the package
// Offline, it needs root (and skips without when BINDFN_SKIP_ROOT=1).
func (r Release) Offline(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	requireOffline(t, name)
	return r.cmd(t, r.Argv(t, true, name, args...))
}

func (r Release) cmd(t testing.TB, argv []string) *exec.Cmd {
	t.Helper()
	c := exec.Command(argv[0], argv[1:]...)
	if !r.Host() {
		c.Env = append(os.Environ(), "BINDFN_USR="+r.Usr(t))
	}
	return c
}

// Env is the environment a caller that builds its own command line around
// UsrScript must pass (none for the host's release).
func (r Release) Env(t testing.TB) []string {
	t.Helper()
	if r.Host() {
		return nil
	}
	return []string{"BINDFN_USR=" + r.Usr(t)}
}

// ReleaseError is a refusal by one release.
type ReleaseError struct {
	Release Release
	Err     error
}

func (e *ReleaseError) Error() string { return e.Release.String() + ": " + e.Err.Error() }
func (e *ReleaseError) Unwrap() error { return e.Err }

// OnEvery runs fn for every release and joins their refusals: the output
// of each release is prefixed with its name ("BIND 9.20: ..."), the error
// is nil only when every release accepted.
func OnEvery(t testing.TB, fn func(r Release) (string, error)) (string, error) {
	t.Helper()
	var out strings.Builder
	var errs []error
	for _, r := range Releases {
		o, err := fn(r)
		if o = strings.TrimSpace(o); o != "" || err != nil {
			fmt.Fprintf(&out, "%s: %s\n", r, o)
		}
		if err != nil {
			errs = append(errs, &ReleaseError{Release: r, Err: err})
		}
	}
	return out.String(), errors.Join(errs...)
}

// Script writes an executable script into dir that runs the release's
// program name with its arguments (for a program that execs BIND by path,
// such as the agent's --named) and returns its path. The script execs, so
// the program keeps the script's PID. For the host's release it returns
// the program's own path.
func (r Release) Script(t testing.TB, dir, name string) string {
	t.Helper()
	if r.Host() {
		return BINDPath(t, name)
	}
	argv := r.Argv(t, false, name)
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# %s %s (bindtools.Release.Script)\nBINDFN_USR=%s exec", r, name, shellQuote(r.Usr(t)))
	for _, a := range argv {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString(" \"$@\"\n")
	p := filepath.Join(dir, name+"-"+r.Name)
	if err := os.WriteFile(p, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
