//go:build cluster

// Package cluster starts a single-node Kubernetes cluster — etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, containerd +
// runc + CNI bridge (Debian), kubelet, kube-proxy and CoreDNS — in a private
// network and mount namespace, and runs pods on it. The infrastructure's
// images (pause, CoreDNS, Crossplane) are built locally and imported; an OCI
// registry of its own (registry_test.go) serves what the tests push, among
// them the BIND pods' images, which the kubelet pulls by digest. `make
// k8s-cluster` (root), part of make test.
package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
	"git.unkin.net/unkin/bind-fn/test/k8s/fixture"
)

const (
	nodeIP    = "10.77.0.1"
	nodeName  = "node1"
	podCIDR   = "10.88.0.0/16"
	dnsIP     = "10.96.0.10"
	pauseTag  = "registry.k8s.io/pause:3.10"
	corednsTg = "registry.k8s.io/coredns/coredns:v1.12.4"
)

var (
	root, bin, dir string
	cp             *controlplane.ControlPlane
	cs             *kubernetes.Clientset
	sock           string
	kubelet        *controlplane.Process
)

func TestMain(m *testing.M) {
	reexeced, code, err := controlplane.InPrivateNetwork("--mount", "--propagation", "private")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
	if reexeced {
		os.Exit(code)
	}
	os.Exit(run(m))
}

func sh(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func step(what string, t0 time.Time) {
	fmt.Printf("cluster: %s (%.1f s)\n", what, time.Since(t0).Seconds())
}

func run(m *testing.M) int {
	wd, _ := os.Getwd()
	root = filepath.Clean(filepath.Join(wd, "..", "..", ".."))
	bin = filepath.Join(root, "bin")
	var err error
	if dir, err = os.MkdirTemp("", "bindfn-cluster-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		teardown()
		fmt.Printf("cluster: logs kept in %s\n", dir)
		return 1
	}
	t0 := time.Now()
	// The node's address lives on a bridge (this VM has no dummy links).
	for _, c := range [][]string{
		{"ip", "link", "add", "br-node", "type", "bridge"},
		{"ip", "addr", "add", nodeIP + "/24", "dev", "br-node"},
		{"ip", "link", "set", "br-node", "up"},
		{"ip", "route", "add", "default", "dev", "br-node"},
	} {
		if err := sh(c[0], c[1:]...); err != nil {
			return fail(err)
		}
	}
	// kubelet and containerd write under /var/lib/kubelet-like paths and
	// /run: give them private copies (the mount namespace is ours).
	for _, d := range []string{"/run", "/var/lib/kubelet", "/var/log/pods", "/var/lib/cni", "/etc/cni"} {
		_ = os.MkdirAll(d, 0o755)
		if err := sh("mount", "-t", "tmpfs", "tmpfs", d); err != nil {
			return fail(err)
		}
	}
	_ = sh("mount", "--make-rshared", "/var/lib/kubelet")
	ctx := context.Background()
	if cp, err = controlplane.Start(ctx, controlplane.Options{Bin: bin, Dir: dir, AdvertiseAddress: nodeIP,
		// kubectl logs, exec and attach (the README's `kubectl run --rm -i`):
		// the API server reaches the kubelet at the node's address with a
		// client certificate the kubelet's client CA trusts.
		ExtraAPIServerArgs: []string{
			"--kubelet-client-certificate=" + filepath.Join(dir, "pki", "admin.crt"),
			"--kubelet-client-key=" + filepath.Join(dir, "pki", "admin.key"),
			"--kubelet-preferred-address-types=InternalIP",
		}}); err != nil {
		return fail(err)
	}
	step("etcd + kube-apiserver ready", t0)
	pki := filepath.Join(dir, "pki")
	for _, p := range []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{"--kubeconfig=" + cp.Kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1",
			"--service-account-private-key-file=" + filepath.Join(pki, "sa.key"), "--root-ca-file=" + filepath.Join(pki, "ca.crt"),
			"--use-service-account-credentials=false", "--cluster-cidr=" + podCIDR, "--service-cluster-ip-range=10.96.0.0/12"}},
		{"kube-scheduler", []string{"--kubeconfig=" + cp.Kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1"}},
	} {
		pr, err := controlplane.StartProcess(dir, p.name, filepath.Join(bin, p.name), p.args...)
		if err != nil {
			return fail(err)
		}
		cp.Add(pr)
	}
	if err := startContainerd(); err != nil {
		return fail(err)
	}
	step("containerd up", t0)
	if err := importImages(); err != nil {
		return fail(err)
	}
	step("images imported", t0)
	if err := startKubelet(); err != nil {
		return fail(err)
	}
	cs = kubernetes.NewForConfigOrDie(cp.RestConfig(nil))
	if err := waitNodeReady(ctx); err != nil {
		return fail(err)
	}
	step("node Ready", t0)
	if err := startKubeRouter(); err != nil {
		return fail(err)
	}
	code := m.Run()
	teardown()
	if code != 0 || os.Getenv("BINDFN_K8S_KEEP") != "" {
		fmt.Printf("cluster: logs kept in %s\n", dir)
	} else {
		unmountUnder(dir)
		os.RemoveAll(dir)
	}
	return code
}

func startContainerd() error {
	d := filepath.Join(dir, "containerd")
	sock = filepath.Join(d, "containerd.sock")
	cni := filepath.Join(d, "net.d")
	if err := os.MkdirAll(cni, 0o755); err != nil {
		return err
	}
	conf := fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %q
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %q
`, filepath.Join(d, "root"), filepath.Join(d, "state"), sock, pauseTag, cni, registryHostsDir())
	if err := os.WriteFile(filepath.Join(d, "config.toml"), []byte(conf), 0o644); err != nil {
		return err
	}
	net := fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "pods", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}`, podCIDR)
	if err := os.WriteFile(filepath.Join(cni, "10-pods.conflist"), []byte(net), 0o644); err != nil {
		return err
	}
	p, err := controlplane.StartProcess(dir, "containerd", "containerd", "--config", filepath.Join(d, "config.toml"))
	if err != nil {
		return err
	}
	cp.Add(p)
	for i := 0; i < 100; i++ {
		if c, err := net2dial(sock); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("containerd not up: %s", p.Tail(20))
}

func net2dial(sock string) (net.Conn, error) { return net.Dial("unix", sock) }

// importImages builds the pause and CoreDNS images with hack/image and
// imports them into containerd's k8s.io namespace (no registry).
func importImages() error {
	imgDir := filepath.Join(dir, "images")
	pauseBin := filepath.Join(imgDir, "pause")
	build := exec.Command("go", "build", "-o", pauseBin, "./pause")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build pause: %v: %s", err, out)
	}
	for _, im := range []struct{ bin, tag string }{{pauseBin, pauseTag}, {filepath.Join(bin, "coredns"), corednsTg}} {
		tar := filepath.Join(imgDir, filepath.Base(im.bin)+".tar")
		if err := sh(filepath.Join(bin, "image"), "-bin", im.bin, "-tag", im.tag, "-o", tar); err != nil {
			return err
		}
		if err := sh("ctr", "-a", sock, "-n", "k8s.io", "images", "import", tar); err != nil {
			return err
		}
	}
	return nil
}

func startKubelet() error {
	d := filepath.Join(dir, "kubelet")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	resolv := filepath.Join(d, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver "+nodeIP+"\n"), 0o644); err != nil {
		return err
	}
	cfg := map[string]any{
		"apiVersion":               "kubelet.config.k8s.io/v1beta1",
		"kind":                     "KubeletConfiguration",
		"failCgroupV1":             false,
		"cgroupDriver":             "cgroupfs",
		"cgroupsPerQOS":            false,
		"enforceNodeAllocatable":   []string{},
		"failSwapOn":               false,
		"containerRuntimeEndpoint": "unix://" + sock,
		"address":                  nodeIP,
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": false},
			"x509":      map[string]any{"clientCAFile": filepath.Join(dir, "pki", "ca.crt")},
		},
		"authorization":                 map[string]any{"mode": "AlwaysAllow"},
		"clusterDNS":                    []string{dnsIP},
		"clusterDomain":                 "cluster.local",
		"resolvConf":                    resolv,
		"evictionHard":                  map[string]string{"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
		"imageGCHighThresholdPercent":   100,
		"imageGCLowThresholdPercent":    99,
		"serializeImagePulls":           false,
		"podCIDR":                       podCIDR,
		"makeIPTablesUtilChains":        true,
		"localStorageCapacityIsolation": false,
		"syncFrequency":                 "10s",
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d, "config.yaml"), data, 0o644); err != nil {
		return err
	}
	p, err := controlplane.StartProcess(dir, "kubelet", filepath.Join(bin, "kubelet"),
		"--config="+filepath.Join(d, "config.yaml"), "--kubeconfig="+cp.Kubeconfig,
		"--hostname-override="+nodeName, "--node-ip="+nodeIP, "--root-dir=/var/lib/kubelet", "--v=2")
	if err != nil {
		return err
	}
	cp.Add(p)
	kubelet = p
	kp, err := controlplane.StartProcess(dir, "kube-proxy", filepath.Join(bin, "kube-proxy"),
		"--kubeconfig="+cp.Kubeconfig, "--hostname-override="+nodeName, "--proxy-mode=iptables",
		"--cluster-cidr="+podCIDR, "--conntrack-max-per-core=0", "--bind-address="+nodeIP)
	if err != nil {
		return err
	}
	cp.Add(kp)
	return nil
}

func waitNodeReady(ctx context.Context) error {
	deadline := time.Now().Add(controlplane.Hang)
	var last string
	for time.Now().Before(deadline) {
		n, err := cs.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err == nil {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					if c.Status == corev1.ConditionTrue {
						return nil
					}
					last = c.Reason + ": " + c.Message
				}
			}
		} else {
			last = err.Error()
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("node not Ready after 3 min: %s", last)
}

func apply(t *testing.T, ctx context.Context, manifest string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "kubectl"), "--kubeconfig", cp.Kubeconfig, "apply", "--server-side", "-f", f).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

// namespaces is a manifest of the Namespaces names (testdata/namespace.yaml).
func namespaces(t *testing.T, names ...string) string {
	t.Helper()
	var docs []string
	for _, n := range names {
		docs = append(docs, fixture.Load(t, "namespace.yaml", map[string]string{"NAME": n}))
	}
	return strings.Join(docs, "---\n")
}

// hostPathPVs makes n hostPath directories under dir that the pods' user
// can write, <prefix>0 to <prefix>n-1, and returns a manifest of one
// PersistentVolume of the same name on each (testdata/pv.yaml): the data
// claims' volumes where no provisioner runs.
func hostPathPVs(t *testing.T, prefix string, n int) string {
	t.Helper()
	var pvs strings.Builder
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(d, 0o777)
		pvs.WriteString(fixture.Load(t, "pv.yaml", map[string]string{"NAME": name, "DIR": d}))
	}
	return pvs.String()
}

// appsRecord is a DNSRecord of apps.example.com, name A address
// (testdata/apps-record.yaml).
func appsRecord(t *testing.T, name, address string) string {
	t.Helper()
	return fixture.Load(t, "apps-record.yaml", map[string]string{"NAME": name, "ADDRESS": address})
}

func waitPodsReady(t *testing.T, ctx context.Context, ns, selector string, n int, timeout time.Duration) []corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err == nil {
			ready := 0
			last = ""
			for _, p := range l.Items {
				ok := false
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
						ok = true
					}
				}
				if ok {
					ready++
				} else {
					last += fmt.Sprintf("%s %s %v; ", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
				}
			}
			if ready >= n {
				return l.Items
			}
		} else {
			last = err.Error()
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("pods %s in %s not Ready after %s: %s%s", selector, ns, timeout, last, warnings(ctx, ns))
	return nil
}

// warnings is the namespace's last Warning events (a controller that cannot
// create a pod says why only there), for a failure message.
func warnings(ctx context.Context, ns string) string {
	l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"})
	if err != nil {
		return "\nevents: " + err.Error()
	}
	var b strings.Builder
	for _, e := range l.Items[max(0, len(l.Items)-10):] {
		fmt.Fprintf(&b, "\n  %s %s/%s %s (%dx): %s", e.LastTimestamp.UTC().Format(time.TimeOnly), e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Count, e.Message)
	}
	if b.Len() == 0 {
		return "\nno Warning events in " + ns
	}
	return "\nthe last Warning events in " + ns + ":" + b.String()
}

// TestPodRuns: the kubelet runs a pod from a locally imported image, with
// an address from the CNI bridge.
func TestPodRuns(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	apply(t, ctx, fixture.Load(t, "pause-pod.yaml", map[string]string{"PAUSE_IMAGE": pauseTag}))
	pods := waitPodsReady(t, ctx, "smoke", "app=pause", 1, controlplane.Hang)
	t.Logf("pod Ready on %s at %s in %.1f s", pods[0].Spec.NodeName, pods[0].Status.PodIP, time.Since(t0).Seconds())
}

// TestClusterDNS: CoreDNS, built from the module proxy, answers for the
// kubernetes Service through its ClusterIP (kube-proxy's rules).
func TestClusterDNS(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	coreDNS(t, ctx)
	var out []byte
	var err error
	for i := 0; i < 30; i++ {
		out, err = exec.Command("dig", "+short", "+time=2", "+tries=1", "@"+dnsIP, "kubernetes.default.svc.cluster.local", "A").CombinedOutput()
		if err == nil && strings.TrimSpace(string(out)) == "10.96.0.1" {
			t.Logf("kubernetes.default.svc.cluster.local = 10.96.0.1 through %s in %.1f s", dnsIP, time.Since(t0).Seconds())
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("dig @%s kubernetes.default.svc.cluster.local: %v %s", dnsIP, err, out)
}

var coreDNSOnce sync.Once

// coreDNS deploys CoreDNS as the cluster DNS (Service 10.96.0.10) once.
func coreDNS(t *testing.T, ctx context.Context) {
	coreDNSOnce.Do(func() { deployCoreDNS(t, ctx) })
}

func deployCoreDNS(t *testing.T, ctx context.Context) {
	apply(t, ctx, fixture.Load(t, "coredns.yaml", map[string]string{"COREDNS_IMAGE": corednsTg, "DNS_IP": dnsIP}))
	waitPodsReady(t, ctx, "kube-system", "k8s-app=kube-dns", 1, controlplane.Hang)
}

// teardown stops the kubelet, kills every container through containerd
// (their shims run in sessions of their own, outside the process groups
// StartProcess kills), then every process of the cluster. As a backstop it
// kills, by PID, any shim still serving this containerd's socket, and its
// children.
func teardown() {
	if cp == nil {
		return
	}
	if kubelet != nil {
		kubelet.Stop()
	}
	if sock != "" {
		ctr := func(args ...string) string {
			out, _ := exec.Command("ctr", append([]string{"-a", sock, "-n", "k8s.io"}, args...)...).Output()
			return string(out)
		}
		ids := strings.Fields(ctr("tasks", "ls", "-q"))
		for _, id := range ids {
			ctr("tasks", "kill", "-a", "-s", "SIGKILL", id)
		}
		time.Sleep(time.Second)
		for _, id := range ids {
			ctr("tasks", "rm", "-f", id)
		}
	}
	cp.Stop()
	if sock != "" {
		for _, pid := range shims(sock) {
			killTree(pid)
		}
	}
}

// shims are the PIDs of containerd-shim processes serving sock.
func shims(sock string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmd), "containerd-shim") && strings.Contains(string(cmd), sock) {
			out = append(out, pid)
		}
	}
	return out
}

// killTree kills pid's children (recursively), then pid, with SIGKILL.
func killTree(pid int) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		// pid (comm) state ppid ...: comm may hold spaces; split after ')'.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
			f := strings.Fields(string(stat)[i+1:])
			if len(f) > 1 && f[1] == strconv.Itoa(pid) {
				killTree(c)
			}
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// agentImage writes the agent image tarball as `make images` builds it
// (its default command copies the agent into the pod's shared emptyDir).
func agentImage(out, tag string) error {
	return sh(filepath.Join(bin, "image"), "-bin", filepath.Join(bin, "bind-fn-agent"), "-path-in-image", "/bind-fn-agent",
		"-entrypoint", "/bind-fn-agent", "-cmd", "copy-self /bind-fn/bin/bind-fn-agent", "-tag", tag, "-o", out)
}

// bindImage builds the BIND image bind-fn ships, with the script `make
// images` runs (hack/bind-image.sh: BIND 9.20 from the pinned Debian trixie
// packages, the root every real-BIND test runs), and returns its tag: the
// render's default image (model.DefaultImage), which the example names.
func bindImage(out string) (string, error) {
	o, err := exec.Command("bash", filepath.Join(root, "hack", "bind-image.sh"), out).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("hack/bind-image.sh: %v\n%s", err, o)
	}
	f := strings.Fields(strings.TrimSpace(string(o)))
	if len(f) != 3 || f[0] != out {
		return "", fmt.Errorf("hack/bind-image.sh printed %q, want: OUT TAG DIGEST", o)
	}
	fmt.Fprintf(os.Stderr, "BIND image %s %s\n", f[1], f[2])
	return f[1], nil
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(bin, "kubectl"), append([]string{"--kubeconfig", cp.Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func dig(args ...string) (string, error) {
	out, err := exec.Command("dig", append([]string{"+short", "+time=2", "+tries=1"}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// TestRenderedCluster: examples/authoritative, rendered with kpt and the
// built functions, its BIND image (BIND 9.20, built here from Debian
// trixie's packages) and agent image pinned by digest in the BindCluster,
// runs on the kubelet: the rendered StatefulSet names both by digest, the
// kubelet pulls them by digest from the registry, every pod is Ready,
// queries are answered through the serve Service's ClusterIP, the
// secondaries serve the primary's serial.
func TestRenderedCluster(t *testing.T) {
	ctx := context.Background()
	coreDNS(t, ctx) // the secondaries find the primary by its cluster DNS name
	t0 := time.Now()
	imgs := pushedImages(t)
	// The example, rendered by kpt, its images pinned by digest.
	pkg := filepath.Join(t.TempDir(), "authoritative")
	if err := os.CopyFS(pkg, os.DirFS(filepath.Join(root, "examples", "authoritative"))); err != nil {
		t.Fatal(err)
	}
	edit := func(file, from, to string) {
		p := filepath.Join(pkg, file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), from, to)
		if s == string(b) {
			t.Fatalf("%s: %q not found", file, from)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The example names the BIND image by tag (the render's default, as the
	// agent's); pin both by digest as a user pins a release
	// (docs/release.md): the kubelet pulls them from the registry by digest.
	edit("cluster.yaml", "  image: "+imgs.bindTag+"\n", "  image: "+imgs.bind+"\n  agent:\n    image: "+imgs.agent+"\n")
	// The example pins no ClusterIP; the test gives its serve Service one
	// so queries can go through it (serveIP, the resolver example's
	// forwarder).
	edit("cluster.yaml", "  service:\n    type: LoadBalancer\n", "  service:\n    type: LoadBalancer\n    clusterIP: "+serveIP+"\n")
	edit("Kptfile", "- image: git.unkin.net/unkin/bind-fn/fn-validate:v0.1.0", "- exec: "+filepath.Join(bin, "fn-validate"))
	edit("Kptfile", "- image: git.unkin.net/unkin/bind-fn/fn-render:v0.1.0", "- exec: "+filepath.Join(bin, "fn-render"))
	render := exec.Command(filepath.Join(bin, "kpt"), "fn", "render", "--allow-exec", pkg)
	render.Dir = filepath.Dir(pkg)
	if out, err := render.CombinedOutput(); err != nil {
		t.Fatalf("kpt fn render: %v\n%s", err, out)
	}
	// One PersistentVolume per replica for the StatefulSet's data claims
	// (no provisioner here).
	// The namespace enforces the restricted Pod Security Standard: the
	// rendered pods must be admitted as they are.
	apply(t, ctx, fixture.Load(t, "namespace-restricted.yaml", map[string]string{"NAME": "dns"})+hostPathPVs(t, "pv-", 3))
	podSecurityEnforced(t, ctx, "dns")
	if diff := cmp.Diff(imgs.byDigest(), renderedImages(t, filepath.Join(pkg, "rendered", "auth", "statefulset_auth.yaml"))); diff != "" {
		t.Fatalf("the rendered StatefulSet's images (-pinned by digest +rendered):\n%s", diff)
	}
	gets0 := map[string]int{}
	for _, ref := range imgs.byDigest() {
		gets0[ref] = manifestGets(t, ref)
	}
	kubectl(t, "apply", "--server-side", "-R", "-f", filepath.Join(pkg, "rendered"))
	pods := waitPodsReady(t, ctx, "dns", "app.kubernetes.io/instance=auth", 3, controlplane.Hang)
	t.Logf("3 BIND pods Ready in %.1f s", time.Since(t0).Seconds())
	pulledByDigest(t, pods, imgs, gets0)
	t.Logf("every pod runs %s and %s, pulled by digest from the registry", imgs.bind, imgs.agent)
	// Every pod runs the image's BIND, the release bind-fn ships: its
	// container log, read where the kubelet writes it (this test's own
	// /var/log/pods; kubectl logs would need the API server to resolve the
	// node's name).
	for _, p := range pods {
		logs, _ := filepath.Glob(filepath.Join("/var/log/pods", "dns_"+p.Name+"_*", "named", "*.log"))
		line := ""
		for _, f := range logs {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, "starting BIND ") {
					line = l
					break
				}
			}
		}
		if !strings.Contains(line, "starting BIND 9.20.") {
			t.Errorf("%s: named should be BIND 9.20, its container log (%v) says %q", p.Name, logs, line)
		}
	}

	// Through the serve Service's ClusterIP (kube-proxy): the external view.
	var got string
	var err error
	for i := 0; i < 30; i++ {
		if got, err = dig("@"+serveIP, "www.example.com", "A"); err == nil && strings.Contains(got, "198.51.100.10") {
			break
		}
		time.Sleep(time.Second)
	}
	if !strings.Contains(got, "198.51.100.10") {
		t.Fatalf("dig @%s www.example.com: %v %q", serveIP, err, got)
	}
	t.Logf("www.example.com through the ClusterIP: %q", got)
	// Every pod serves the zone with the same serial (secondaries by transfer).
	serials := map[string]string{}
	for _, p := range pods {
		var s string
		for i := 0; i < 30; i++ {
			if s, err = dig("@"+p.Status.PodIP, "example.com", "SOA"); err == nil && s != "" {
				break
			}
			time.Sleep(time.Second)
		}
		f := strings.Fields(s)
		if len(f) < 3 {
			t.Fatalf("%s (%s): SOA %q %v", p.Name, p.Status.PodIP, s, err)
		}
		serials[p.Name] = f[2]
	}
	for n, s := range serials {
		if s != serials[pods[0].Name] {
			t.Errorf("serials differ: %v", serials)
			break
		}
		_ = n
	}
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount != 0 {
				t.Errorf("%s/%s restarted %d times", p.Name, c.Name, c.RestartCount)
			}
		}
	}
	t.Logf("every pod serves example.com with serial %s", serials[pods[0].Name])

	// answers waits until every pod answers name with want.
	answers := func(t *testing.T, name, want string, timeout time.Duration) {
		t.Helper()
		l, err := cs.CoreV1().Pods("dns").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=auth"})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(timeout)
		for _, p := range l.Items {
			for {
				got, _ := dig("@"+p.Status.PodIP, name, "A")
				lines := strings.Split(got, "\n")
				sort.Strings(lines)
				if got = strings.Join(lines, "\n"); got == want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s (%s) answers %s with %q, want %q", p.Name, p.Status.PodIP, name, got, want)
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	}
	keyFile := filepath.Join(t.TempDir(), "key.conf")
	sec, err := cs.CoreV1().Secrets("dns").Get(ctx, "externaldns-key-tsig", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, sec.Data["key.conf"], 0o600); err != nil {
		t.Fatal(err)
	}
	update := func(t *testing.T, name, addr string) {
		t.Helper()
		svc, err := cs.CoreV1().Services("dns").Get(ctx, "auth-primary", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("nsupdate", "-k", keyFile)
		cmd.Stdin = strings.NewReader(fmt.Sprintf("server %s\nzone apps.example.com\nupdate add %s 60 A %s\nsend\n", svc.Spec.ClusterIP, name, addr))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nsupdate through auth-primary (%s): %v\n%s", svc.Spec.ClusterIP, err, out)
		}
	}
	restarts := func(t *testing.T) {
		t.Helper()
		l, err := cs.CoreV1().Pods("dns").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=auth"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.Items {
			for _, c := range p.Status.ContainerStatuses {
				if c.RestartCount != 0 {
					t.Errorf("%s/%s restarted %d times", p.Name, c.Name, c.RestartCount)
				}
			}
		}
	}

	t.Run("DNSRecordAppliedByAgent", func(t *testing.T) {
		// records.yaml's DNSRecords of the dynamic zone reach named only
		// through the agent's TSIG-signed UPDATEs on the primary.
		answers(t, "shop.apps.example.com", "198.51.100.120\n198.51.100.121", controlplane.Hang)
	})

	t.Run("DynamicUpdateReachesEverySecondary", func(t *testing.T) {
		t0 := time.Now()
		update(t, "k8s-test.apps.example.com", "198.51.100.200")
		answers(t, "k8s-test.apps.example.com", "198.51.100.200", controlplane.Hang)
		t.Logf("a TSIG-signed update through the auth-primary Service reached every pod in %.1f s", time.Since(t0).Seconds())
	})

	t.Run("ConfigMapUpdateWithoutRestart", func(t *testing.T) {
		t0 := time.Now()
		edit("zones.yaml", `    - {name: ns1, type: A, values: ["198.51.100.53"]}
`, `    - {name: ns1, type: A, values: ["198.51.100.53"]}
    - {name: k8s-added, type: A, values: ["198.51.100.77"]}
`)
		last := `  values: ["198.51.100.120", "198.51.100.121"]
`
		edit("records.yaml", last, last+"---\n"+appsRecord(t, "k8s-record", "198.51.100.78"))
		render := exec.Command(filepath.Join(bin, "kpt"), "fn", "render", "--allow-exec", pkg)
		render.Dir = filepath.Dir(pkg)
		if out, err := render.CombinedOutput(); err != nil {
			t.Fatalf("kpt fn render: %v\n%s", err, out)
		}
		kubectl(t, "apply", "--server-side", "-R", "-f", filepath.Join(pkg, "rendered"))
		answers(t, "k8s-added.example.com", "198.51.100.77", controlplane.Hang)
		answers(t, "k8s-record.apps.example.com", "198.51.100.78", controlplane.Hang)
		restarts(t)
		t.Logf("a changed zone and a new DNSRecord (applied by the agent) reached every pod through the kubelet's ConfigMap update in %.1f s, no container restarted", time.Since(t0).Seconds())
	})

	// served_test.go and roll_test.go.
	t.Run("MergeToServed", func(t *testing.T) { mergeToServed(t, ctx, pkg, 20) })
	t.Run("RollingUpgrade", func(t *testing.T) { rollingUpgrade(t, ctx) })

	t.Run("PrimaryRescheduled", func(t *testing.T) {
		t0 := time.Now()
		old, err := cs.CoreV1().Pods("dns").Get(ctx, "auth-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Pods("dns").Delete(ctx, "auth-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(controlplane.Hang)
		for {
			p, err := cs.CoreV1().Pods("dns").Get(ctx, "auth-0", metav1.GetOptions{})
			if err == nil && p.UID != old.UID && p.Status.PodIP != "" {
				ready := false
				for _, c := range p.Status.Conditions {
					ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
				}
				if ready {
					t.Logf("auth-0 back on %s (was %s) in %.1f s", p.Status.PodIP, old.Status.PodIP, time.Since(t0).Seconds())
					if p.Status.PodIP == old.Status.PodIP {
						t.Logf("note: the CNI gave the same address again")
					}
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("auth-0 not back and Ready after 3 min")
			}
			time.Sleep(time.Second)
		}
		update(t, "after-move.apps.example.com", "198.51.100.201")
		answers(t, "after-move.apps.example.com", "198.51.100.201", controlplane.Hang)
		answers(t, "k8s-test.apps.example.com", "198.51.100.200", controlplane.Hang)
		t.Logf("replication continues after the primary moved (%.1f s)", time.Since(t0).Seconds())
	})

	// netpol_test.go; last, as it narrows who may query.
	t.Run("NetworkPolicyEnforced", func(t *testing.T) { networkPolicyEnforced(t, ctx, pkg, edit, update, answers) })
}

// unmountUnder detaches every mount below dir (containerd's sandbox shm
// mounts outlive their containers in this mount namespace).
func unmountUnder(dir string) {
	data, _ := os.ReadFile("/proc/self/mounts")
	var mps []string
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
			mps = append(mps, f[1])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(mps)))
	for _, mp := range mps {
		_ = syscall.Unmount(mp, syscall.MNT_DETACH)
	}
}
