package multipod

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

func surfaceIP(i int) string { return fmt.Sprintf("198.18.24.%d", 10+i) }

const surfaceSvc = "198.18.25.10"

// surfacePaths are every path the agent serves or once served on its
// metrics port, and paths a client might guess for a state change.
var surfacePaths = []string{"/metrics", "/status", "/readyz", "/healthz", "/drain", "/", "/reload", "/reconfig", "/apply", "/debug/pprof/"}

// surfaceReads are the network listener's routes: GET only.
var surfaceReads = map[string]bool{"/metrics": true, "/status": true, "/readyz": true, "/healthz": true}

// TestAgentSurface runs examples/authoritative's three pods and asks every
// pod's agent, from the lab's own network namespace (not the pod's), every
// path with GET and POST: the probe and metrics routes answer GET and
// refuse POST (405), every other path, /drain among them, is 404, and
// nothing changes: /readyz stays 200, /status reads as before, named runs
// the same process and got no control command, the run directory (config
// link, server lists, keys, rndc key) is untouched. Then the rendered
// preStop hook runs inside one pod, as the kubelet's exec would: that pod
// turns unready while named keeps answering, and the hook returns when the
// drain ends.
func TestAgentSurface(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	r := renderInputs(t, authInputs(t), nil)
	// A short drain: the hook's wait is not what this test measures.
	c := lab.startCluster(r, "auth", podPlan{IP: surfaceIP, PrimarySvc: surfaceSvc, NetnsPrefix: "surf-", AgentArgs: []string{"--drain", "3s"}})
	t.Cleanup(c.stop)
	c.waitReady(hang)

	before := map[string]podState{}
	for _, p := range c.Pods {
		before[p.Name] = readPodState(t, p)
	}
	for _, p := range c.Pods {
		for _, path := range surfacePaths {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				want := http.StatusNotFound
				if surfaceReads[path] {
					want = http.StatusMethodNotAllowed
					if method == http.MethodGet {
						want = http.StatusOK
					}
				}
				code, body, err := agentRequest(method, p.AgentURL(path))
				if err != nil || code != want {
					t.Errorf("%s: %s %s from outside the pod = %d %.60q %v, want %d", p.Name, method, path, code, body, err, want)
				}
			}
		}
	}
	for _, p := range c.Pods {
		if d := cmp.Diff(before[p.Name], readPodState(t, p)); d != "" {
			t.Errorf("%s: requests from outside the pod changed it (-before +after):\n%s", p.Name, d)
		}
	}
	if t.Failed() {
		return
	}

	// The preStop hook, as rendered, run inside the last pod.
	p := c.Pods[len(c.Pods)-1]
	hook := preStopCommand(t, c)
	out := &syncLog{}
	proc := lab.startProc(p.Net, p.Root, p.env, hook, out)
	if err := eventually(hang, 20*time.Millisecond, func() error {
		code, body, err := agentRequest(http.MethodGet, p.AgentURL("/readyz"))
		if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(body, "draining since") {
			return fmt.Errorf("/readyz = %d %q %v, want 503 draining", code, body, err)
		}
		return nil
	}); err != nil {
		t.Fatalf("%s: the preStop hook %q did not drain the pod: %v", p.Name, hook, err)
	}
	if err := expect(p.Net.IP, "example.com", dns.TypeSOA, q{}, dns.RcodeSuccess, nil); err != nil {
		t.Errorf("%s: named stopped answering while draining: %v", p.Name, err)
	}
	select {
	case <-proc.done:
	case <-time.After(hang):
		t.Fatalf("%s: the preStop hook did not return within %s", p.Name, hang)
	}
	if proc.err != nil || !strings.Contains(out.String(), "drained") {
		t.Errorf("%s: the preStop hook ended with %v, output %q; want success and \"drained\"", p.Name, proc.err, out.String())
	}
	if err := expect(p.Net.IP, "example.com", dns.TypeSOA, q{}, dns.RcodeSuccess, nil); err != nil {
		t.Errorf("%s: named stopped answering after the drain, before any SIGTERM: %v", p.Name, err)
	}
	for _, other := range c.Pods[:len(c.Pods)-1] {
		if code, body, err := agentRequest(http.MethodGet, other.AgentURL("/readyz")); err != nil || code != http.StatusOK {
			t.Errorf("%s: /readyz = %d %q %v after %s drained, want 200: a drain is the pod's own", other.Name, code, body, err, p.Name)
		}
	}
}

// podState is what a request from outside must leave as it was.
type podState struct {
	Status       map[string]any
	Readyz       int
	Metrics      []string
	RunDir       map[string]string // file → sha256 (or link target)
	RNDCCommands int
}

// readPodState reads the pod's agent (status, readiness, reload metrics),
// its run directory and named's count of control channel commands. The
// last convergence pass's time moves on its own and is left out.
func readPodState(t *testing.T, p *Pod) podState {
	t.Helper()
	var s podState
	if err := getJSON(p.AgentURL("/status"), &s.Status); err != nil {
		t.Fatalf("%s /status: %v", p.Name, err)
	}
	delete(s.Status, "lastConvergence")
	code, _, err := agentRequest(http.MethodGet, p.AgentURL("/readyz"))
	if err != nil {
		t.Fatalf("%s /readyz: %v", p.Name, err)
	}
	s.Readyz = code
	_, metrics, err := agentRequest(http.MethodGet, p.AgentURL("/metrics"))
	if err != nil {
		t.Fatalf("%s /metrics: %v", p.Name, err)
	}
	for _, l := range strings.Split(metrics, "\n") {
		for _, m := range []string{"bindfn_agent_reloads_total", "bindfn_agent_reload_failures_total", "bindfn_agent_last_apply_timestamp_seconds", "bindfn_agent_ready ", "bindfn_agent_named_up "} {
			if strings.HasPrefix(l, m) {
				s.Metrics = append(s.Metrics, l)
			}
		}
	}
	s.RunDir = treeSums(t, filepath.Join(p.Root, layout.RunDir))
	s.RNDCCommands = strings.Count(p.Log.String(), "received control channel command")
	return s
}

// treeSums is every file under dir by its content's hash, every link by its
// target; sockets are left out.
func treeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch d.Type() {
		case fs.ModeSymlink:
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		case 0:
			b, err := os.ReadFile(p)
			sum := sha256.Sum256(b)
			out[rel] = hex.EncodeToString(sum[:])
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// agentRequest sends one request (bounded by hang) and returns the status
// and body.
func agentRequest(method, url string) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// preStopCommand is the named container's preStop exec hook, as rendered.
func preStopCommand(t *testing.T, c *Cluster) []string {
	t.Helper()
	for _, ctr := range c.r.StatefulSet.Spec.Template.Spec.Containers {
		if ctr.Name != "named" {
			continue
		}
		if ctr.Lifecycle == nil || ctr.Lifecycle.PreStop == nil || ctr.Lifecycle.PreStop.Exec == nil {
			t.Fatalf("the named container's preStop hook is %+v, want an exec hook run inside the pod", ctr.Lifecycle)
		}
		return ctr.Lifecycle.PreStop.Exec.Command
	}
	t.Fatal("no named container")
	return nil
}
