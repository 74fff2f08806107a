//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
	"git.unkin.net/unkin/bind-fn/test/k8s/fixture"
)

// startKubeRouter runs kube-router's network policy controller, and only
// it, as the node's NetworkPolicy enforcer: iptables and ipset in the
// cluster's network namespace, a chain per selected pod that ends in a
// REJECT (counted, see rejected). SIG Network's kube-network-policies
// cannot run here: it needs nftables' queue expression (CONFIG_NFT_QUEUE),
// which this kernel does not have.
func startKubeRouter() error {
	p, err := controlplane.StartProcess(dir, "kube-router", filepath.Join(bin, "kube-router"),
		"--kubeconfig="+cp.Kubeconfig, "--hostname-override="+nodeName,
		"--run-firewall=true", "--run-router=false", "--run-service-proxy=false",
		"--service-cluster-ip-range=10.96.0.0/12", "--metrics-port=0")
	if err != nil {
		return err
	}
	cp.Add(p)
	return nil
}

// probe is a pause pod's network namespace, where the test runs the host's
// dig and curl as if from that pod.
type probe struct {
	ns  string
	pid int
}

func (p probe) run(name string, args ...string) (string, error) {
	out, err := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(p.pid), "-n", name}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// dig asks server from the probe, one try; "" and an error when nothing
// answers (REJECT: ICMP unreachable).
func (p probe) dig(args ...string) (string, error) {
	return p.run("dig", append([]string{"+time=2", "+tries=1"}, args...)...)
}

// get fetches url from the probe; an error when the connection fails.
func (p probe) get(url string) (string, error) {
	return p.run("curl", "-sS", "--fail", "--max-time", "5", url)
}

// startProbe runs a pause pod named probe in namespace ns and returns its
// network namespace (the container's PID, from containerd).
func startProbe(t *testing.T, ctx context.Context, ns string) probe {
	t.Helper()
	apply(t, ctx, fixture.Load(t, "probe-pod.yaml", map[string]string{"NAMESPACE": ns, "PAUSE_IMAGE": pauseTag}))
	pods := waitPodsReady(t, ctx, ns, "app=probe", 1, controlplane.Hang)
	if len(pods[0].Status.ContainerStatuses) == 0 {
		t.Fatalf("%s/probe: no container status", ns)
	}
	id := strings.TrimPrefix(pods[0].Status.ContainerStatuses[0].ContainerID, "containerd://")
	out, err := exec.Command("ctr", "-a", sock, "-n", "k8s.io", "tasks", "ls").Output()
	if err != nil {
		t.Fatalf("ctr tasks ls: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == id {
			pid, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return probe{ns: ns, pid: pid}
		}
	}
	t.Fatalf("%s/probe: container %s not among containerd's tasks:\n%s", ns, id, out)
	return probe{}
}

// rejected is how many packets the enforcer has rejected on their way to
// pod dns/name: the counter of kube-router's REJECT rule for that pod.
func rejected(t *testing.T, name string) int {
	t.Helper()
	out, err := exec.Command("iptables-save", "-c", "-t", "filter").Output()
	if err != nil {
		t.Fatalf("iptables-save: %v", err)
	}
	want := "rule to REJECT traffic destined for POD name:" + name + " namespace: dns\""
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.Contains(l, want) || !strings.HasPrefix(l, "[") {
			continue
		}
		c, _, _ := strings.Cut(strings.TrimPrefix(l, "["), ":")
		v, err := strconv.Atoi(c)
		if err != nil {
			t.Fatalf("iptables-save counter %q: %v", l, err)
		}
		n += v
	}
	return n
}

// refusedByPolicy runs try, which must fail, and checks that the enforcer
// rejected packets to pod name meanwhile (so the failure is the policy's,
// not a closed port or a stopped server). It retries until then: the
// enforcer applies a changed policy a moment after the API server has it.
func refusedByPolicy(t *testing.T, name, what string, try func() (string, error)) {
	t.Helper()
	deadline := time.Now().Add(controlplane.Hang)
	for {
		before := rejected(t, name)
		out, err := try()
		after := rejected(t, name)
		if err != nil && after > before {
			t.Logf("%s: refused by the NetworkPolicy (%d packets rejected to %s)", what, after-before, name)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: want a failure with packets rejected to %s; got err %v (rejected %d → %d), output %q", what, name, err, before, after, out)
		}
		time.Sleep(time.Second)
	}
}

// networkPolicyEnforced: the rendered NetworkPolicy, on a real enforcer.
// Default (DNS from anywhere): a pod of another namespace queries every
// server, its AXFR reaches named and is refused by named (transfers by key
// only), its request to the agent's port is rejected by the policy while
// a pod of the namespace metricsFrom names reads /metrics and the node's
// probes keep every pod Ready. With dnsFrom restricted to that namespace,
// the outsider's queries and AXFR are rejected by the policy, the allowed
// namespace still queries, and replication (NOTIFY, transfers from the
// primary Service between the cluster's own pods) still carries an
// update to every pod. Changing the policy rolls no pod.
func networkPolicyEnforced(t *testing.T, ctx context.Context, pkg string, edit func(file, from, to string),
	update func(t *testing.T, name, addr string), answers func(t *testing.T, name, want string, timeout time.Duration)) {
	outsider := startProbe(t, ctx, "outsider")
	monitor := startProbe(t, ctx, "monitoring")
	uids := map[string]string{}
	for _, p := range authPods(t, ctx) {
		uids[p.Name] = string(p.UID)
	}
	reapply := func(t *testing.T) {
		t.Helper()
		renderPkg(t, pkg)
		kubectl(t, "apply", "--server-side", "-R", "-f", filepath.Join(pkg, "rendered"))
	}
	// The example admits metrics from nobody by default: name the
	// monitoring namespace.
	edit("cluster.yaml", "    - max-cache-size 64m\n", `    - max-cache-size 64m
  networkPolicy:
    metricsFrom:
      - namespaceSelector:
          matchLabels: {kubernetes.io/metadata.name: monitoring}
`)
	reapply(t)
	pods := authPods(t, ctx)

	t.Run("DefaultDNSFromAnywhere", func(t *testing.T) {
		for _, p := range pods {
			var got string
			var err error
			for i := 0; i < 30; i++ {
				if got, err = outsider.dig("+short", "@"+p.Status.PodIP, "example.com", "SOA"); err == nil && got != "" {
					break
				}
				time.Sleep(time.Second)
			}
			if err != nil || got == "" {
				t.Fatalf("outsider → %s (%s) example.com SOA: %v %q", p.Name, p.Status.PodIP, err, got)
			}
		}
		t.Logf("a pod of namespace outsider queries every server")
		// The transfer reaches named, which refuses it: no key.
		before := rejected(t, "auth-0")
		got, _ := outsider.dig("@"+pods[0].Status.PodIP, "example.com", "AXFR")
		if !strings.Contains(got, "Transfer failed") || rejected(t, "auth-0") != before {
			t.Fatalf("outsider AXFR example.com from auth-0: want named's refusal (Transfer failed) and nothing rejected by the policy, got %q", got)
		}
		t.Logf("outsider's AXFR reached named and was refused by it (allow-transfer: keys only)")
	})

	t.Run("MetricsFromMonitoringOnly", func(t *testing.T) {
		const port = "9119" // the default spec.agent.metricsPort
		for _, p := range pods {
			url := "http://" + p.Status.PodIP + ":" + port + "/metrics"
			refusedByPolicy(t, p.Name, "outsider → "+url, func() (string, error) { return outsider.get(url) })
			got, err := monitor.get(url)
			if err != nil || !strings.Contains(got, "# TYPE") {
				t.Fatalf("monitoring → %s: %v %q", url, err, tail(got, 5))
			}
		}
		// The kubelet's probes come from the node: every pod stays Ready.
		waitPodsReady(t, ctx, "dns", "app.kubernetes.io/instance=auth", 3, controlplane.Hang)
		t.Logf("the agent's port: rejected from outsider, served to monitoring and to the node's probes")
	})

	t.Run("DNSFromRestricted", func(t *testing.T) {
		edit("cluster.yaml", "  networkPolicy:\n", `  networkPolicy:
    dnsFrom:
      - namespaceSelector:
          matchLabels: {kubernetes.io/metadata.name: monitoring}
`)
		t0 := time.Now()
		reapply(t)
		for _, p := range pods {
			ip := p.Status.PodIP
			refusedByPolicy(t, p.Name, "outsider → "+p.Name+" SOA", func() (string, error) {
				return outsider.dig("+short", "@"+ip, "example.com", "SOA")
			})
			if got, err := monitor.dig("+short", "@"+ip, "example.com", "SOA"); err != nil || got == "" {
				t.Fatalf("monitoring → %s example.com SOA: %v %q", p.Name, err, got)
			}
		}
		t.Logf("outsider's queries rejected on every pod %.1f s after the apply; monitoring still answered", time.Since(t0).Seconds())
		ip := pods[0].Status.PodIP
		refusedByPolicy(t, "auth-0", "outsider AXFR example.com from auth-0", func() (string, error) {
			out, err := outsider.dig("+tcp", "@"+ip, "example.com", "AXFR")
			if err == nil && strings.Contains(out, "SOA") && !strings.Contains(out, "failed") {
				return out, nil
			}
			return out, fmt.Errorf("no transfer")
		})
		t1 := time.Now()
		update(t, "netpol.apps.example.com", "198.51.100.210")
		answers(t, "netpol.apps.example.com", "198.51.100.210", controlplane.Hang)
		t.Logf("with dnsFrom restricted, an update still reached every pod in %.1f s (NOTIFY and transfers between the cluster's pods)", time.Since(t1).Seconds())
	})

	for _, p := range authPods(t, ctx) {
		if uids[p.Name] != string(p.UID) {
			t.Errorf("%s was replaced while only the NetworkPolicy changed", p.Name)
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount != 0 {
				t.Errorf("%s/%s restarted %d times", p.Name, c.Name, c.RestartCount)
			}
		}
	}
}

// podSecurityEnforced: the API server refuses, in namespace ns, a pod that
// breaks the restricted standard (the pause pod, which sets no security
// context), so the rendered pods that run there were admitted under it.
func podSecurityEnforced(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "not-restricted", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: pauseTag}}},
	}
	_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Fatalf("a pod without a security context in %s: got %v, want a PodSecurity refusal (restricted enforced)", ns, err)
	}
}
