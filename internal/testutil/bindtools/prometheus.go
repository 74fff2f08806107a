package bindtools

import (
	"os/exec"
	"testing"
)

const prometheusHint = "install Debian's prometheus package with `make tools` (or: apt-get install -y --no-install-recommends prometheus; " +
	"the package's service need not run), or set " + EnvSkipCLI + "=1 to skip tests that need it"

// Prometheus returns the absolute path of Debian's prometheus or promtool
// (name). It fails the test when the program is missing (it skips instead
// when BINDFN_SKIP_CLI=1).
func Prometheus(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if skipping(EnvSkipCLI) {
		t.Skipf("%s=1 and %s is missing", EnvSkipCLI, name)
	}
	t.Fatalf("this test needs %s (Debian's prometheus package), which is missing: %s", name, prometheusHint)
	return ""
}
