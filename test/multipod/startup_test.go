package multipod

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// TestSecondariesBeforePrimaryService (docs/kubelet-sync.md, "Start-up: a
// secondary that asked before the primary was Ready"; on the kubelet the
// secondaries took ~100 s to become ready). On the kubelet every pod
// starts at once (podManagementPolicy Parallel); a secondary's named asks
// the primary Service for the catalog before the primary is Ready, and a
// Service without a ready endpoint rejects it; the primary's own start-up
// NOTIFYs went out before the secondary listened. BIND then retries the
// never-loaded catalog on its own backoff. Here: the primary runs, its
// Service address rejects (iptables REJECT in its netns) while fresh
// secondaries start, and accepts again BINDFN_SERVICE_DOWN seconds later
// (default 3). Every pod must become ready; how long the secondaries took
// after the Service came back is reported, not asserted.
func TestSecondariesBeforePrimaryService(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	down := 3 * time.Second
	if v := os.Getenv("BINDFN_SERVICE_DOWN"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("BINDFN_SERVICE_DOWN=%q: want seconds", v)
		}
		down = time.Duration(n) * time.Second
	}
	lab := newLab(t, filepath.Dir(agentBin))
	c := lab.startCluster(renderInputs(t, authInputs(t), nil), "auth", podPlan{IP: authIP, PrimarySvc: authPrimarySvc, Extra: map[int][]string{1: {authServeVIP}}})
	for _, p := range c.Secondaries() {
		p.stop()
	}
	c.Pods[0].waitReady(hang)
	time.Sleep(time.Second) // the primary's start-up NOTIFYs are spent
	reject := func(op string) {
		for _, proto := range []string{"tcp", "udp"} {
			rule := []string{"netns", "exec", c.Pods[0].Net.Name, "iptables", op, "INPUT", "-d", authPrimarySvc, "-p", proto, "--dport", "53", "-j", "REJECT"}
			if proto == "tcp" {
				rule = append(rule, "--reject-with", "tcp-reset")
			}
			if out, err := exec.Command("ip", rule...).CombinedOutput(); err != nil {
				t.Fatalf("iptables %s: %v: %s", op, err, out)
			}
		}
	}
	reject("-I")
	for _, p := range c.Secondaries() { // fresh pods: nothing transferred yet
		data := filepath.Join(p.Root, layout.DataDir)
		if err := os.RemoveAll(data); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(data, 0o755); err != nil {
			t.Fatal(err)
		}
		p.start()
	}
	err := eventually(hang, 100*time.Millisecond, func() error {
		for _, p := range c.Secondaries() {
			if !containsLine(p.Log.String(), "catalog.example.internal/IN/external: refresh: failure trying primary") {
				return fmt.Errorf("%s has not tried the primary Service yet", p.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(down)
	reject("-D")
	back := time.Now()
	for _, p := range c.Secondaries() {
		p.waitReady(hang)
		t.Logf("%s ready %v after the primary Service accepted again (it rejected for %v after the secondary's first refresh)", p.Name, time.Since(back).Round(time.Millisecond), down)
	}
}

func containsLine(log, sub string) bool { return grep(log, sub) != "" }
