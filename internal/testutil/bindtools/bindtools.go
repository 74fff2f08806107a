// Package bindtools holds the helpers shared by tests that need the real
// world: Debian's BIND 9 tools, root, the repository's bin/ CLIs and loopback
// ports. It imports nothing of the project, so every package's tests can use
// it (internal/testutil, which builds rendered clusters, cannot be imported by
// the packages below the renderer).
//
// A test that needs something missing FAILS with a hint on how to install
// it, because a skipped test proves nothing in CI. Each requirement has an
// opt-out for machines that cannot meet it:
//
//	BINDFN_SKIP_BIND=1  skip tests that need named and its tools
//	BINDFN_SKIP_ROOT=1  skip tests that need root (namespaces)
//	BINDFN_SKIP_CLI=1   skip tests that need bin/ CLIs (make tools build)
package bindtools

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Module is the main module's path; RepoRoot looks for its go.mod.
const Module = "git.unkin.net/unkin/bind-fn"

// BINDTools are the BIND programs the tests run.
var BINDTools = []string{"named", "named-checkconf", "named-checkzone", "rndc", "dig", "nsupdate"}

// Environment switches.
const (
	EnvSkipBIND = "BINDFN_SKIP_BIND"
	EnvSkipRoot = "BINDFN_SKIP_ROOT"
	EnvSkipCLI  = "BINDFN_SKIP_CLI"
)

const installHint = "install Debian's BIND 9 with `make tools` (or: apt-get update && " +
	"DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bind9 bind9-utils bind9-dnsutils), " +
	"or set " + EnvSkipBIND + "=1 to skip tests that need it"

// sbinDirs are searched after PATH: a non-login root shell may lack /usr/sbin.
var sbinDirs = []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"}

func skipping(env string) bool { return os.Getenv(env) == "1" }

// LookBIND returns the absolute path of a BIND program, searching PATH and
// then the sbin directories Debian installs named into.
func LookBIND(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	for _, d := range sbinDirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("cannot find %q in PATH or %s", name, strings.Join(sbinDirs, ", "))
}

// RequireBIND fails the test unless every one of BINDTools is installed
// (it skips instead when BINDFN_SKIP_BIND=1).
func RequireBIND(t testing.TB) {
	t.Helper()
	var missing []string
	for _, n := range BINDTools {
		if _, err := LookBIND(n); err != nil {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return
	}
	if skipping(EnvSkipBIND) {
		t.Skipf("%s=1 and BIND tools are missing: %s", EnvSkipBIND, strings.Join(missing, ", "))
	}
	t.Fatalf("this test needs BIND 9, but %s %s missing: %s", strings.Join(missing, ", "), plural(len(missing)), installHint)
}

func plural(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// BINDPath is LookBIND for a test: the program's absolute path, after
// RequireBIND.
func BINDPath(t testing.TB, name string) string {
	t.Helper()
	RequireBIND(t)
	p, err := LookBIND(name)
	if err != nil {
		t.Fatalf("%v; %s", err, installHint)
	}
	return p
}

// RequireRoot fails the test unless it runs as root (it skips instead when
// BINDFN_SKIP_ROOT=1).
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if skipping(EnvSkipRoot) {
		t.Skipf("%s=1 and this test needs root", EnvSkipRoot)
	}
	t.Fatalf("this test needs root (it creates network and mount namespaces): run it as root, "+
		"or set %s=1 to skip it", EnvSkipRoot)
}

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// findRoot walks up from dir to the directory whose go.mod declares Module.
func findRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if m, err := moduleOf(filepath.Join(d, "go.mod")); err == nil && m == Module {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("cannot find the repository root: no go.mod declaring module %s above %s", Module, dir)
		}
	}
}

func moduleOf(goMod string) (string, error) {
	b, err := os.ReadFile(goMod)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", errors.New("no module line")
}

// RepoRoot is the repository root (the directory of the main go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Bin is the absolute path of bin/<name> in the repository. It fails the
// test when the file is missing (it skips instead when BINDFN_SKIP_CLI=1).
func Bin(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(RepoRoot(t), "bin", name)
	fi, err := os.Stat(p)
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return p
	}
	if skipping(EnvSkipCLI) {
		t.Skipf("%s=1 and %s is missing", EnvSkipCLI, p)
	}
	t.Fatalf("this test needs %s, which is missing or not executable: run `make tools build` first, "+
		"or set %s=1 to skip tests that need bin/ CLIs", p, EnvSkipCLI)
	return ""
}

// FreePort returns a port on 127.0.0.1 that is free for both TCP and UDP
// (DNS needs both) at the time of the call, never the same one twice in a
// test binary. It is drawn below Linux's ephemeral range (32768-60999 by
// default): a port the kernel hands to a listener on port 0 (an agent's
// HTTP listener in the same test) or to a client's source port cannot be
// one FreePort returned and a server has not bound yet. Drawn from the
// ephemeral range, a named of the agent's tests once found its DNS port
// taken by the agent's own metrics listener, and its secondary's transfers
// read HTTP.
func FreePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 500 {
		port := freePortLow + rand.IntN(freePortHigh-freePortLow)
		if portsGiven[port] {
			continue
		}
		l, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		u, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", port))
		l.Close()
		if err != nil {
			continue
		}
		u.Close()
		portsGiven[port] = true
		return port
	}
	t.Fatalf("cannot find a loopback port in %d-%d free for both TCP and UDP", freePortLow, freePortHigh-1)
	return 0
}

// FreePort's range: below the kernel's ephemeral ports, above the ports
// of well-known services.
const freePortLow, freePortHigh = 20000, 32768

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// NamedCheckconf runs `named-checkconf -t root -z file` on every release
// (Releases): file is the absolute path named sees inside root (the pod's
// path), so the rendered config is checked with the paths the pod uses,
// zones loaded. It returns each release's output, prefixed with its name,
// and an error unless every release accepts the config.
func NamedCheckconf(t testing.TB, root, file string) (string, error) {
	t.Helper()
	return OnEvery(t, func(r Release) (string, error) { return r.NamedCheckconf(t, root, file) })
}

// NamedCheckconf is the package function on this release alone.
func (r Release) NamedCheckconf(t testing.TB, root, file string) (string, error) {
	t.Helper()
	out, err := r.Offline(t, "named-checkconf", "-t", root, "-z", file).CombinedOutput()
	return string(out), err
}

// Offline returns a command that cannot reach any network: BIND's checkers
// look up out-of-zone MX, SRV and NS targets through the system resolver
// when loading zones, and tests must send nothing off the machine. As root
// the command runs in a fresh, empty network namespace (unshare -n); as
// any other user it fails the test rather than risk the traffic (it skips
// instead when BINDFN_SKIP_ROOT=1). name is a host program (see
// Release.Offline for a release's).
func Offline(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	requireOffline(t, filepath.Base(name))
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare (util-linux) is missing: it keeps BIND's checkers off the network")
	}
	return exec.Command(unshare, append([]string{"-n", name}, args...)...)
}

// requireOffline fails the test unless it runs as root, which a private
// network namespace needs (it skips instead when BINDFN_SKIP_ROOT=1).
func requireOffline(t testing.TB, name string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if skipping(EnvSkipRoot) {
		t.Skipf("%s=1 and %s must run in a private network namespace (unshare -n), which needs root", EnvSkipRoot, name)
	}
	t.Fatalf("%s must run in a private network namespace (unshare -n), which needs root: run the test as root, "+
		"or set %s=1 to skip it", name, EnvSkipRoot)
}

// NamedCheckzone runs `named-checkzone zone file` on every release and
// returns their outputs and an error unless every release loads the zone.
func NamedCheckzone(t testing.TB, zone, file string) (string, error) {
	t.Helper()
	return OnEvery(t, func(r Release) (string, error) { return r.NamedCheckzone(t, zone, file) })
}

// NamedCheckzone is the package function on this release alone.
func (r Release) NamedCheckzone(t testing.TB, zone, file string) (string, error) {
	t.Helper()
	out, err := r.Offline(t, "named-checkzone", "-i", "local", zone, file).CombinedOutput()
	return string(out), err
}
