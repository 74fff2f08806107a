package multipod

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// The lab: everything runs inside private network, mount and PID namespaces
// (unshare -n -m -p), so nothing leaves the machine and every process dies
// with the lab's PID 1 (this test binary), even when the test is killed.
const (
	envInLab = "BINDFN_MULTIPOD_LAB"
	// envLabRun names this run: every network namespace the lab creates is
	// prefixed with it. /run/netns is shared by every lab on the machine
	// (the lab's private mount namespace still writes the host's /run), so
	// two labs at once (make demo beside make test) need distinct names.
	envLabRun = "BINDFN_MULTIPOD_RUN"
	bridge    = "br-lab"
	// labClient is the lab's own address on the bridge: a client outside
	// any ACL (external view). officeClient is in the office ACL.
	labClient    = "198.18.0.1"
	officeClient = "192.0.2.1"
	labPrefix    = 16
	// partnerClient is in the ACL scenario 4 adds.
	partnerClient = "198.18.7.1"
)

// inLab reports whether this process already runs inside the lab.
func inLab() bool { return os.Getenv(envInLab) == "1" }

// enterLab re-executes the test binary (with the same flags, so -run and -v
// carry over) as PID 1 of a fresh network+mount+PID namespace. The caller
// built everything first: the lab has no network.
func enterLab(t *testing.T) {
	t.Helper()
	unshare := mustLook(t, "unshare")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-n", "-m", "-p", "--fork", "--kill-child=SIGKILL", "--mount-proc", "--propagation", "private", self}, labArgs(t.Name(), os.Args[1:])...)
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), envInLab+"=1", envLabRun+"="+newRunID())
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		t.Fatalf("the lab (unshare -n -m -p) failed: %v (its output is above)", err)
	}
}

// newRunID is unique among the labs running at once (the outer PID) and
// unlikely to meet a namespace a killed run left behind (random bits).
func newRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("l%d-%x", os.Getpid(), b)
}

// labRun is this run's namespace name prefix ("" outside the lab).
func labRun() string {
	if r := os.Getenv(envLabRun); r != "" {
		return r + "-"
	}
	return ""
}

func mustLook(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		for _, d := range []string{"/usr/sbin", "/sbin"} {
			if _, err := os.Stat(filepath.Join(d, name)); err == nil {
				return filepath.Join(d, name)
			}
		}
		t.Fatalf("%s is missing: the multi-pod suite needs iproute2 and util-linux (apt-get install iproute2 util-linux)", name)
	}
	return p
}

// sh runs a command and fails the test on error.
func sh(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Lab is the bridge every pod's veth plugs into.
type Lab struct {
	t      *testing.T
	dir    string
	binDir string // mounted at /bind-fn/bin in every pod
	// release is the BIND every process of the lab runs (bindtools.Current).
	release bindtools.Release
	mu      sync.Mutex
	nveth   int
}

// podMountPoints must exist in the (shared) root file system: each pod's
// mount namespace binds its own tree over them.
var podMountPoints = []string{"/etc/bind-fn", "/run/bind-fn", "/var/lib/bind", "/bind-fn/bin"}

// mountPointsLock is flocked (shared) by every running lab;
// mountPointsCreated lists the mount points labs created.
const (
	mountPointsLock    = "/run/bind-fn-lab.lock"
	mountPointsCreated = "/run/bind-fn-lab.created"
)

func newLab(t *testing.T, binDir string) *Lab {
	t.Helper()
	if !inLab() {
		t.Fatal("newLab outside the lab namespace")
	}
	ip := mustLook(t, "ip")
	sh(t, ip, "link", "set", "lo", "up")
	sh(t, ip, "link", "add", bridge, "type", "bridge")
	sh(t, ip, "addr", "add", labClient+"/16", "dev", bridge)
	sh(t, ip, "addr", "add", officeClient+"/24", "dev", bridge)
	sh(t, ip, "addr", "add", partnerClient+"/24", "dev", bridge)
	sh(t, ip, "link", "set", bridge, "up")
	// The pod mount points live in the host's root file system, which every
	// lab shares. Each running lab holds a shared lock on mountPointsLock;
	// the directories a lab creates are listed in mountPointsCreated; the
	// last lab to finish (the only one that can lock exclusively) removes
	// them, so one lab never pulls them from under another.
	lock, err := os.OpenFile(mountPointsLock, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer lock.Close()
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			return // another lab still uses them
		}
		b, _ := os.ReadFile(mountPointsCreated)
		for _, p := range strings.Fields(string(b)) { // deepest first
			_ = os.Remove(p)
		}
		_ = os.Remove(mountPointsCreated)
	})
	for _, d := range podMountPoints {
		var created []string
		for p := d; p != "/"; p = filepath.Dir(p) {
			if _, err := os.Stat(p); err == nil {
				break
			}
			created = append(created, p)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if len(created) > 0 {
			f, err := os.OpenFile(mountPointsCreated, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.WriteString(strings.Join(created, "\n") + "\n")
			f.Close()
		}
	}
	rel := bindtools.Current(t)
	t.Logf("the lab runs %s (%s)", rel, bindtools.EnvRelease)
	return &Lab{t: t, dir: t.TempDir(), binDir: binDir, release: rel}
}

// withRelease makes n run r's BIND (a mixed-version cluster).
func (l *Lab) withRelease(n *Netns, r bindtools.Release) {
	l.t.Helper()
	n.Usr = r.Usr(l.t)
}

// Netns is one pod's network namespace with a veth on the lab bridge.
type Netns struct {
	Name string
	IP   string // the pod IP (first address, source of its packets)
	// Extra are /32 addresses standing in for Service VIPs (DNAT targets).
	Extra []string
	// Usr is bound over /usr for every process started in it: the BIND
	// release it runs ("" for the host's).
	Usr string
}

func (l *Lab) addNetns(name, ip string, extra ...string) *Netns {
	t := l.t
	t.Helper()
	l.mu.Lock()
	l.nveth++
	host := fmt.Sprintf("vl%d", l.nveth)
	l.mu.Unlock()
	name = labRun() + name // unique per run: /run/netns is shared
	sh(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	sh(t, "ip", "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", name)
	sh(t, "ip", "link", "set", host, "master", bridge, "up")
	sh(t, "ip", "-n", name, "link", "set", "lo", "up")
	sh(t, "ip", "-n", name, "addr", "add", fmt.Sprintf("%s/%d", ip, labPrefix), "dev", "eth0")
	for _, e := range extra {
		sh(t, "ip", "-n", name, "addr", "add", e+"/32", "dev", "eth0")
	}
	sh(t, "ip", "-n", name, "link", "set", "eth0", "up")
	sh(t, "ip", "-n", name, "route", "add", "default", "via", labClient)
	return &Netns{Name: name, IP: ip, Extra: extra, Usr: l.release.Usr(t)}
}

// setIP moves the pod to a new address (its old one is gone), as a
// rescheduled pod would come back.
func (l *Lab) setIP(n *Netns, ip string) {
	l.t.Helper()
	sh(l.t, "ip", "-n", n.Name, "addr", "del", fmt.Sprintf("%s/%d", n.IP, labPrefix), "dev", "eth0")
	sh(l.t, "ip", "-n", n.Name, "addr", "add", fmt.Sprintf("%s/%d", ip, labPrefix), "dev", "eth0")
	// Extra addresses must stay secondary to the pod IP (source selection).
	for _, e := range n.Extra {
		sh(l.t, "ip", "-n", n.Name, "addr", "del", e+"/32", "dev", "eth0")
		sh(l.t, "ip", "-n", n.Name, "addr", "add", e+"/32", "dev", "eth0")
	}
	sh(l.t, "ip", "-n", n.Name, "route", "replace", "default", "via", labClient)
	n.IP = ip
}

// Proc is one process started in a pod: the container command.
type Proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// podScript enters a private mount namespace (inside `ip netns exec`, which
// already gives one), binds the pod's tree over the mount points and the
// pod's hosts file over /etc/hosts, binds the pod's BIND release over /usr
// (POD_USR, bindtools.Release.Usr: every program the pod runs, named,
// named-checkconf and rndc among them, is that release's), then execs the
// container command with the container's environment only.
const podScript = `set -e
if [ -n "$POD_ROOT" ]; then
mount --make-rprivate /
mount --bind "$POD_ROOT/etc/bind-fn" /etc/bind-fn
mount --bind "$POD_ROOT/run/bind-fn" /run/bind-fn
mount --bind "$POD_ROOT/var/lib/bind" /var/lib/bind
mount --bind "$POD_BIN" /bind-fn/bin
mount --bind "$POD_ROOT/etc/hosts" /etc/hosts
fi
if [ -n "$POD_USR" ]; then
mount --bind -o ro "$POD_USR" /usr
fi
eval "exec env -i $POD_ENV \"\$@\""
`

// startProc runs argv in netns with root bound over the pod mount points
// (root "": no mounts, for the hand-written reference servers).
// Output goes to logw. The process (and everything it starts) gets its own
// process group, killed on cleanup.
func (l *Lab) startProc(n *Netns, root string, env []string, argv []string, logw io.Writer) *Proc {
	t := l.t
	t.Helper()
	var quoted []string
	for _, e := range env {
		quoted = append(quoted, shellQuote(e))
	}
	args := append([]string{"netns", "exec", n.Name, "unshare", "-m", "--propagation", "private", "--", "/bin/sh", "-c", podScript, "pod"}, argv...)
	cmd := exec.Command("ip", args...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "POD_ROOT=" + root, "POD_BIN=" + l.binDir, "POD_USR=" + n.Usr, "POD_ENV=" + strings.Join(quoted, " ")}
	cmd.Stdout, cmd.Stderr = logw, logw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	p := &Proc{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill(syscall.SIGKILL) })
	return p
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Pid is the container command's PID (every wrapper execs, none forks).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// kill signals the whole process group and waits for the leader.
func (p *Proc) kill(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	// named may outlive the agent for a moment: sweep the group again.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

func (p *Proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// syncLog is a pod's log: a file plus an in-memory copy for assertions.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
	f  *os.File
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		_, _ = s.f.Write(p)
	}
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tail is the last n lines.
func (s *syncLog) tail(n int) string {
	lines := strings.Split(strings.TrimRight(s.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// httpGet fetches a URL (bounded by hang).
func httpGet(url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func getJSON(url string, v any) error {
	code, b, err := httpGet(url)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %s", url, code, b)
	}
	return json.Unmarshal(b, v)
}

// hang bounds the lab's waits for something that should happen: a guard
// against hanging, not a performance target (see bindtools.Hang).
const hang = bindtools.Hang

// eventually polls cond every step until it returns nil or timeout passes.
func eventually(timeout, step time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(step)
	}
}
