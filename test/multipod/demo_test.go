package multipod

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemo is `make demo`: it starts examples/authoritative (primary + 2
// secondaries) in the lab, exactly as TestLab does, and queries it with dig,
// printing the answers. Run only when BINDFN_DEMO=1.
func TestDemo(t *testing.T) {
	if os.Getenv("BINDFN_DEMO") != "1" {
		t.Skip("BINDFN_DEMO=1 runs the demo (make demo)")
	}
	agentBin := requirements(t)
	if !inLab() {
		enterLab(t)
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	r := renderInputs(t, authInputs(t), nil)
	start := time.Now()
	auth := lab.startCluster(r, "auth", podPlan{IP: authIP, PrimarySvc: authPrimarySvc, Extra: map[int][]string{1: {authServeVIP}}})
	auth.waitReady(hang)
	fmt.Printf("\nexamples/authoritative: %d pods ready in %v (pod 0 primary at %s, Service %s)\n\n", len(auth.Pods), time.Since(start).Round(time.Millisecond), auth.Pods[0].Net.IP, authPrimarySvc)
	dig := mustLook(t, "dig")
	run := func(title string, args ...string) {
		fmt.Printf("$ dig %s    # %s\n", strings.Join(args, " "), title)
		out, _ := exec.Command(dig, append([]string{"+norec", "+noall", "+answer", "+comments", "+tcp"}, args...)...).CombinedOutput()
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if strings.HasPrefix(l, ";; ->>HEADER") || strings.HasPrefix(l, ";; flags") || (l != "" && !strings.HasPrefix(l, ";")) {
				fmt.Println("   ", l)
			}
		}
		fmt.Println()
	}
	for _, p := range auth.Pods {
		run("external view, "+p.Name, "@"+p.Net.IP, "-b", labClient, "www.example.com", "A")
	}
	run("internal view (office client 192.0.2.1), secondary auth-2", "@"+auth.Pods[2].Net.IP, "-b", officeClient, "intranet.example.com", "A")
	run("dynamic zone, converged from DNSRecords, secondary auth-1", "@"+auth.Pods[1].Net.IP, "-b", labClient, "shop.apps.example.com", "A")
	run("DNSSEC-signed zone on secondary auth-1", "@"+auth.Pods[1].Net.IP, "-b", labClient, "+dnssec", "www.secure.example.com", "A")
	code, body, err := httpGet(auth.Pods[0].AgentURL("/status"))
	fmt.Printf("$ curl http://%s:9119/status    # the primary's agent\n    %d %s %v\n", auth.Pods[0].Net.IP, code, strings.TrimSpace(string(body)), err)
}

// TestLabsSideBySide: two labs at once on one machine (the demo, twice, as
// `make demo` beside `make test` would run) both succeed, and neither
// leaves a network namespace behind in the shared /run/netns.
func TestLabsSideBySide(t *testing.T) {
	requirements(t)
	if inLab() {
		return // it starts labs of its own, from outside
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		cmd *exec.Cmd
		out bytes.Buffer
	}
	var runs []*run
	for range 2 {
		r := &run{cmd: exec.Command(self, "-test.run", "^TestDemo$", "-test.count", "1", "-test.v")}
		r.cmd.Env = append(os.Environ(), "BINDFN_DEMO=1")
		r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	for i, r := range runs {
		err := r.cmd.Wait()
		if err != nil || !strings.Contains(r.out.String(), "3 pods ready") || !strings.Contains(r.out.String(), "198.51.100.10") {
			t.Errorf("lab %d of 2 running at once failed (%v):\n%s", i+1, err, r.out.String())
		}
		// Its namespaces were named l<its pid>-<random>-<pod>; none is left.
		left, _ := filepath.Glob(fmt.Sprintf("/run/netns/l%d-*", r.cmd.Process.Pid))
		if len(left) > 0 {
			t.Errorf("lab %d left network namespaces behind: %v", i+1, left)
		}
	}
}
