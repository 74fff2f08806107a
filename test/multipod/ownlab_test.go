package multipod

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// envLabTest names the one test a lab of its own was made for.
const envLabTest = "BINDFN_LAB_TEST"

// ownLab runs the calling test in a lab of its own (TestLab's lab holds its
// own cluster, bridge and addresses): outside a lab it re-executes the test
// binary, running only this test, inside fresh namespaces and returns
// false; inside that lab it returns true. Inside a lab made for another
// test (go test without -run enters TestLab's lab with every test) it
// skips: this test runs, and is reported, in its own.
func ownLab(t *testing.T) bool {
	t.Helper()
	if inLab() {
		if os.Getenv(envLabTest) != t.Name() {
			t.Skipf("%s runs in a lab of its own", t.Name())
		}
		return true
	}
	unshare := mustLook(t, "unshare")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-n", "-m", "-p", "--fork", "--kill-child=SIGKILL", "--mount-proc", "--propagation", "private", self}, os.Args[1:]...)
	args = append(args, "-test.run=^"+t.Name()+"$")
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), envInLab+"=1", envLabTest+"="+t.Name(), envLabRun+"="+newRunID()) // a run prefix: /run/netns is shared with every other lab
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		t.Fatalf("the lab (unshare -n -m -p) failed: %v (its output is above)", err)
	}
	return false
}
