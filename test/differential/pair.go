package differential

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/agent/serversconf"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// The pair: the primary and one secondary, each in its own network and
// mount namespace, joined by a veth pair (the primary creates it and moves
// the peer into the secondary's namespace). The agent's runtime
// servers.conf is written for these two addresses, so the secondary
// transfers every zone from the primary with the rendered keys, catalog
// zones and views: "loaded every zone" on a secondary means transferred.
const (
	pairPrimaryIP   = "192.0.2.10"
	pairSecondaryIP = "192.0.2.20"
)

// TransferTimeout bounds the wait for the secondary to transfer every zone.
// It is not bindtools.Hang: a package whose zones never transfer (a kept
// divergence, a wrong key) waits it out, so it is what such a verdict costs.
var TransferTimeout = 15 * time.Second

// pairServers is servers.conf as the agent writes it on these two pods
// (serversconf.Write): each list resolved to the other pod of the pair, and
// both pods in the peers ACL.
func pairServers(doc layout.AgentConfigDoc) (string, error) {
	primary, secondary := net.ParseIP(pairPrimaryIP), net.ParseIP(pairSecondaryIP)
	lists := []serversconf.List{{Name: "pair", ACLOnly: true, IPs: []net.IP{primary, secondary}}}
	for _, l := range doc.ServerLists {
		ip := primary
		if l.Role == "primary" { // the list the primary uses: its secondaries
			ip = secondary
		}
		lists = append(lists, serversconf.List{Name: l.Name, Key: l.Key, Port: l.Port, ACLOnly: l.ACLOnly, IPs: []net.IP{ip}})
	}
	return serversconf.Write(lists)
}

// netSetup runs before the mounts, in the pod's new network namespace.
const secondaryNet = `i=0; while ! ip link show peer0 >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 400 ] && { echo "no veth from the primary" >&2; exit 1; }; sleep 0.05; done
ip addr add ` + pairSecondaryIP + `/24 dev peer0; ip link set peer0 up
i=0; while [ ! -e "$POD_ROOT/.go" ]; do i=$((i+1)); [ $i -gt 2400 ] && { echo "the primary never started" >&2; exit 1; }; sleep 0.05; done
`

const primaryNet = `ip link add eth0 type veth peer name peer0
ip link set peer0 netns "$PEER_PID"
ip addr add ` + pairPrimaryIP + `/24 dev eth0; ip link set eth0 up
`

type namedProc struct {
	cmd   *exec.Cmd
	lines chan string
	log   []string
	run   bool
	done  bool
}

func startPairNamed(t testing.TB, ctx context.Context, root, conf, net string, env ...string) (*namedProc, error) {
	rel := bindtools.Current(t)
	named := rel.Prog(t, "named")
	script := strings.Replace(podScript, "ip link set lo up\n", "ip link set lo up\n"+net, 1)
	cmd := exec.CommandContext(ctx, "unshare", "-n", "-m", "/bin/sh", "-c", script, "pod", named, "-g", "-n", "1", "-c", layout.ConfigFile(conf))
	cmd.Env = append(append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "POD_ROOT=" + root}, rel.Env(t)...), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return nil, err
	}
	pw.Close()
	p := &namedProc{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	return p, nil
}

// waitOwnNetns waits until pid is in a network namespace other than this
// process's.
func waitOwnNetns(pid int) error {
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return err
	}
	deadline := time.Now().Add(bindtools.Hang)
	for {
		ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err == nil && ns != self {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the secondary (pid %d) is not in a network namespace of its own after %s (%v)", pid, bindtools.Hang, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *namedProc) stop() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
}

var reTransferred = regexp.MustCompile(`transfer of '([^']+)' from [^:]+: Transfer status: success`)

// zoneKey is how named names a zone in its log: zone/IN, or zone/IN/view.
func zoneKey(name, view string) string {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "" {
		name = "."
	}
	if view == "" || view == "_default" {
		return name + "/in"
	}
	return name + "/in/" + strings.ToLower(view)
}

// runPair starts the primary and a secondary of one cluster, joined by a
// veth pair, and waits until the secondary has transferred every primary
// zone (catalog and response policy zones and catalog members included).
func runPair(t testing.TB, c *testutil.Cluster, pRoot, sRoot string, zones []zoneFile) []Failure {
	st := soft{t}
	var doc layout.AgentConfigDoc
	if msg := guard(func() { doc = testutil.AgentConfig(st, c) }); msg != "" {
		return []Failure{{Stage: StageLayout, Cluster: c.Name, Msg: msg}}
	}
	servers, err := pairServers(doc)
	if err != nil {
		return []Failure{{Stage: StageLayout, Cluster: c.Name, Msg: err.Error()}}
	}
	for _, root := range []string{pRoot, sRoot} {
		if err := os.WriteFile(filepath.Join(root, layout.RunFile(layout.ServersInclude)), []byte(servers), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// every primary zone the secondary does not load from its own file
	// (response policy zones are shipped to every pod) comes by transfer
	local := map[string]bool{}
	for _, z := range zoneList(t, sRoot, layout.ConfigFile(layout.NamedConfSecondary), true) {
		if z.typ == "primary" {
			local[zoneKey(z.name, z.view)] = true
		}
	}
	want := map[string]bool{}
	for _, z := range zones {
		if k := zoneKey(z.name, z.view); !local[k] {
			want[k] = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), NamedTimeout)
	defer cancel()
	sec, err := startPairNamed(t, ctx, sRoot, layout.NamedConfSecondary, secondaryNet)
	if err != nil {
		return []Failure{{Stage: StageNamed, Cluster: c.Name, Where: "secondary", Msg: err.Error()}}
	}
	defer sec.stop()
	// The veth peer must land in the secondary's namespace, never in ours:
	// wait until unshare has made it (the PID keeps its /proc entry).
	if err := waitOwnNetns(sec.cmd.Process.Pid); err != nil {
		return []Failure{{Stage: StageLayout, Cluster: c.Name, Where: "secondary", Msg: err.Error()}}
	}
	pri, err := startPairNamed(t, ctx, pRoot, layout.NamedConfPrimary, primaryNet, fmt.Sprintf("PEER_PID=%d", sec.cmd.Process.Pid))
	if err != nil {
		return []Failure{{Stage: StageNamed, Cluster: c.Name, Where: "primary", Msg: err.Error()}}
	}
	defer pri.stop()

	// The secondary's named starts once the primary runs and has settled
	// (zones, response policies and catalogs loaded), as pods do: the agent
	// of a secondary waits for the primary. Transfers racing the primary's
	// startup would hide what it does once up.
	released := false
	var release <-chan time.Time
	got := map[string]bool{}
	var transferDeadline <-chan time.Time
	var settleAfter <-chan time.Time
	read := func(p *namedProc, l string, ok bool) {
		if !ok {
			p.done = true
			return
		}
		p.log = append(p.log, l)
		if !p.run && strings.HasSuffix(l, " running") {
			p.run = true
		}
		if m := reTransferred.FindStringSubmatch(l); m != nil && p == sec {
			got[strings.ToLower(m[1])] = true
		}
	}
	complete := func() bool {
		for k := range want {
			if !got[k] {
				return false
			}
		}
		return true
	}
loop:
	for {
		if pri.run && release == nil && !released {
			release = time.After(settle)
		}
		if pri.run && sec.run && transferDeadline == nil {
			transferDeadline = time.After(TransferTimeout)
		}
		if pri.run && sec.run && complete() && settleAfter == nil {
			settleAfter = time.After(settle)
		}
		if (pri.done && !pri.run) || (sec.done && !sec.run) {
			break
		}
		if pri.done && sec.done {
			break
		}
		select {
		case l, ok := <-pri.lines:
			if pri.done {
				pri.lines = nil
				continue
			}
			read(pri, l, ok)
		case l, ok := <-sec.lines:
			if sec.done {
				sec.lines = nil
				continue
			}
			read(sec, l, ok)
		case <-release:
			released, release = true, nil
			if err := os.WriteFile(filepath.Join(sRoot, ".go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		case <-transferDeadline:
			break loop
		case <-settleAfter:
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	var fails []Failure
	for _, p := range []*namedProc{pri, sec} {
		where := "primary"
		if p == sec {
			where = "secondary"
		}
		var bad []string
		for _, l := range p.log {
			if fatalLines.MatchString(l) && !benign.MatchString(l) && !pairBenign.MatchString(l) {
				bad = append(bad, stripTime(l))
			}
		}
		switch {
		case !p.run:
			// the cause is often the line before named's own verdict
			bad = append(tail(p.log, 6), bad...)
			fails = append(fails, Failure{Stage: StageNamed, Cluster: c.Name, Where: where, Msg: "named exited early: " + strings.Join(bad, "\n")})
		case len(bad) > 0:
			fails = append(fails, Failure{Stage: StageNamed, Cluster: c.Name, Where: where, Msg: strings.Join(bad, "\n")})
		}
	}
	if len(fails) > 0 || !pri.run || !sec.run {
		return fails
	}
	var missing []string
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		// what both sides said about the missing zones
		var names []string
		for _, m := range missing {
			names = append(names, strings.Split(m, "/")[0])
		}
		var said []string
		for _, p := range []*namedProc{sec, pri} {
			for _, l := range p.log {
				ll := strings.ToLower(l)
				for _, z := range names {
					if strings.Contains(ll, z) && !strings.Contains(l, "loaded serial") {
						said = append(said, stripTime(l))
						break
					}
				}
			}
		}
		cause := "no transfer"
		for _, cs := range transferCauses {
			for _, l := range said {
				if cs.re.MatchString(l) {
					cause = cs.cause
					break
				}
			}
			if cause != "no transfer" {
				break
			}
		}
		if len(said) > 8 && os.Getenv("BINDFN_DIFF_ALLSAID") == "" {
			said = said[len(said)-8:]
		}
		fails = append(fails, Failure{Stage: StageTransfer, Cluster: c.Name, Where: "secondary",
			Msg: fmt.Sprintf("secondary never got every zone: %s\nnot transferred within %s: %s\n%s", cause, TransferTimeout, strings.Join(missing, ", "), strings.Join(said, "\n"))})
	}
	return fails
}

// pairBenign are log lines that are normal between two real pods, or that
// the transfer stage reports with its cause.
var pairBenign = regexp.MustCompile(`(?i)(zone transfer setup failed|received notify for zone .*: not authoritative|refused notify from non-primary|bad zone transfer request)`)

// transferCauses name why a zone did not arrive, from either side's log.
var transferCauses = []struct {
	re    *regexp.Regexp
	cause string
}{
	{regexp.MustCompile(`ran out of space`), "the transfer request does not fit BIND's buffer (ran out of space)"},
	{regexp.MustCompile(`rpz QNAME [\w-]+ rewrite`), "a response policy rewrites the secondary's SOA query on the primary"},
	{regexp.MustCompile(`bad zone transfer request: .*non-authoritative`), "the transfer request lands in a view without the zone (NOTAUTH)"},
	{regexp.MustCompile(`zone transfer .* denied`), "the primary denies the transfer"},
	{regexp.MustCompile(`(?i)tsig verify failure|tsig .*(error|fail)|BADKEY|BADSIG|BADTIME|bad key`), "TSIG"},
	{regexp.MustCompile(`query .* denied|REFUSED|refused`), "the primary refuses the secondary's query"},
}
