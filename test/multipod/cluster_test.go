package multipod

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// Inputs is a package of bind.unkin.net objects the test may edit.
type Inputs []model.Item

// Edit changes the object kind/name through its JSON form.
func (in Inputs) Edit(t testing.TB, kind, name string, fn func(obj map[string]any)) Inputs {
	t.Helper()
	return testutil.EditItem(t, in, kind, name, fn)
}

// Remove drops kind/name.
func (in Inputs) Remove(t testing.TB, kind, name string) Inputs {
	t.Helper()
	var out Inputs
	for _, it := range in {
		if it.Source.Ref.Kind == kind && it.Source.Ref.Name == name {
			continue
		}
		out = append(out, it)
	}
	if len(out) == len(in) {
		t.Fatalf("no %s %q in the inputs", kind, name)
	}
	return out
}

// Add appends the objects of a YAML stream.
func (in Inputs) Add(t testing.TB, yamlText string) Inputs {
	t.Helper()
	return in.add(t, "added.yaml", []byte(yamlText))
}

// AddFile returns in plus the objects of testdata/<name>; a decode error
// names that file.
func (in Inputs) AddFile(t testing.TB, name string) Inputs {
	t.Helper()
	path := filepath.Join("testdata", name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return in.add(t, path, b)
}

// AddFixture returns in plus the objects of testdata/<name> with its
// ${VAR}s filled from vars (fixture).
func (in Inputs) AddFixture(t testing.TB, name string, vars map[string]string) Inputs {
	t.Helper()
	return in.add(t, filepath.Join("testdata", name), []byte(fixture(t, name, vars)))
}

// fixture is testdata/<name> with each ${VAR} replaced by vars[VAR]; a
// variable vars does not hold fails the test, naming the file. The test/k8s
// module, which cannot import this one, has the same in test/k8s/fixture.
func fixture(t testing.TB, name string, vars map[string]string) string {
	t.Helper()
	return fixtureTemplate(t, name)(vars)
}

// fixtureTemplate reads testdata/<name> once and returns what fills it as
// fixture does, for a test that makes many objects of one template.
func fixtureTemplate(t testing.TB, name string) func(vars map[string]string) string {
	t.Helper()
	path := filepath.Join("testdata", name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return func(vars map[string]string) string {
		t.Helper()
		var missing []string
		out := os.Expand(string(b), func(v string) string {
			val, ok := vars[v]
			if !ok {
				missing = append(missing, v)
			}
			return val
		})
		if len(missing) > 0 {
			t.Fatalf("%s: no value for ${%s}", path, strings.Join(missing, "}, ${"))
		}
		return out
	}
}

// add returns in plus the objects decoded from data, which source names.
func (in Inputs) add(t testing.TB, source string, data []byte) Inputs {
	t.Helper()
	items, err := testutil.DecodeItems(source, data)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(Inputs(nil), in...), items...)
}

// spec returns obj["spec"] as a map.
func spec(obj map[string]any) map[string]any {
	s, _ := obj["spec"].(map[string]any)
	if s == nil {
		s = map[string]any{}
		obj["spec"] = s
	}
	return s
}

// Rendered is one render of a package, kept as the previous output of the
// next one (serials go up only when content changes, keys stay).
type Rendered struct {
	Objs     []render.Object
	Clusters map[string]*testutil.Cluster
}

func renderInputs(t testing.TB, in Inputs, prev *Rendered) *Rendered {
	t.Helper()
	// Deterministic key material: every render of the package has the
	// same keys even without a previous output.
	objs, rs := pipeline.Run(pipeline.Input{Items: in, Previous: prevObjects(prev)}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		for _, r := range rs {
			t.Log(r)
		}
		t.Fatal("render failed")
	}
	return &Rendered{Objs: objs, Clusters: testutil.Clusters(t, objs)}
}

// prevObjects are a render's Secrets and ConfigMaps as the next render's
// previous output (nil for none).
func prevObjects(prev *Rendered) []prior.Object {
	var prevObjs []prior.Object
	if prev != nil {
		for _, o := range prev.Objs {
			switch v := o.Obj.(type) {
			case *corev1.Secret:
				p := prior.Object{Kind: "Secret", Data: v.Data, Annotations: v.Annotations}
				p.Src.Ref.Namespace, p.Src.Ref.Name = v.Namespace, v.Name
				prevObjs = append(prevObjs, p)
			case *corev1.ConfigMap:
				data := map[string][]byte{}
				for k, s := range v.Data {
					data[k] = []byte(s)
				}
				p := prior.Object{Kind: "ConfigMap", Annotations: v.Annotations, Data: data}
				p.Src.Ref.Namespace, p.Src.Ref.Name = v.Namespace, v.Name
				prevObjs = append(prevObjs, p)
			}
		}
	}
	return prevObjs
}

// Pod is one StatefulSet pod: its network namespace, its file tree (the
// volumes at their mount paths, PVC and emptyDirs as directories) and the
// running container command.
type Pod struct {
	lab     *Lab
	Name    string
	Ordinal int
	Net     *Netns
	Root    string
	Log     *syncLog
	proc    *Proc
	argv    []string
	env     []string
	hosts   map[string]string
	cluster *testutil.Cluster
}

// Cluster is a set of running pods of one rendered BindCluster.
type Cluster struct {
	lab        *Lab
	Name       string
	Namespace  string
	Pods       []*Pod
	PrimarySvc string // the <cluster>-primary Service address
	r          *testutil.Cluster
}

// podPlan says where the pods of a cluster live.
type podPlan struct {
	// IP of ordinal i.
	IP func(i int) string
	// PrimarySvc is the Service address, an extra address on pod 0.
	PrimarySvc string
	// Extra addresses per ordinal (serve VIP stand-ins).
	Extra map[int][]string
	// NetnsPrefix keeps a second render of the same cluster apart.
	NetnsPrefix string
	// Releases runs ordinal i on another BIND release than the lab's (a
	// rolling upgrade caught half way).
	Releases map[int]bindtools.Release
	// Net, when set, makes each pod's network namespace instead of the
	// lab bridge (a cluster on a network of its own, multicluster_test.go).
	Net func(name, ip string, extra ...string) *Netns
	// AgentArgs are appended to every pod's agent command (the agent
	// differential's shorter converge interval).
	AgentArgs []string
}

// startCluster lays out and starts every pod of the rendered cluster.
func (l *Lab) startCluster(r *Rendered, name string, plan podPlan) *Cluster {
	t := l.t
	t.Helper()
	rc := r.Clusters[name]
	if rc == nil || rc.StatefulSet == nil {
		t.Fatalf("no rendered cluster %q", name)
	}
	c := &Cluster{lab: l, Name: name, Namespace: rc.StatefulSet.Namespace, PrimarySvc: plan.PrimarySvc, r: rc}
	n := int(*rc.StatefulSet.Spec.Replicas)
	for i := range n {
		podName := fmt.Sprintf("%s-%d", name, i)
		extra := plan.Extra[i]
		if i == 0 {
			extra = append([]string{plan.PrimarySvc}, extra...)
		}
		p := &Pod{lab: l, Name: podName, Ordinal: i, Root: filepath.Join(l.dir, plan.NetnsPrefix+podName), cluster: rc}
		if plan.Net != nil {
			p.Net = plan.Net(plan.NetnsPrefix+podName, plan.IP(i), extra...)
		} else {
			p.Net = l.addNetns(plan.NetnsPrefix+podName, plan.IP(i), extra...)
		}
		if rel, ok := plan.Releases[i]; ok {
			l.withRelease(p.Net, rel)
		}
		logDir := l.dir
		if d := os.Getenv("BINDFN_LAB_LOGDIR"); d != "" { // keep every pod's full log
			logDir = d
		}
		f, err := os.Create(filepath.Join(logDir, plan.NetnsPrefix+podName+".log"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		p.Log = &syncLog{f: f}
		c.Pods = append(c.Pods, p)
	}
	hosts := c.hostsMap()
	for _, p := range c.Pods {
		p.hosts = hosts
		p.layVolumes(rc)
		p.writeHosts()
		if err := os.MkdirAll(filepath.Join(p.Root, layout.RunDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(p.Root, layout.DataDir), 0o755); err != nil {
			t.Fatal(err)
		}
		p.argv, p.env = containerCommand(t, rc, p.Name)
		p.argv = append(p.argv, plan.AgentArgs...)
		p.start()
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range c.Pods {
				t.Logf("--- log of %s (last 40 lines) ---\n%s", p.Name, p.Log.tail(40))
			}
		}
	})
	return c
}

// hostsMap is what kube-dns answers for the cluster: the primary Service and
// every pod's headless name (short and namespaced forms).
func (c *Cluster) hostsMap() map[string]string {
	m := map[string]string{layout.PrimaryServiceName(c.Name): c.PrimarySvc}
	for _, p := range c.Pods {
		m[p.Name+"."+layout.HeadlessServiceName(c.Name)] = p.Net.IP
	}
	return m
}

// updateHosts rewrites every pod's /etc/hosts in place, as cluster DNS would
// start answering with a pod's new address.
func (c *Cluster) updateHosts() {
	h := c.hostsMap()
	for _, p := range c.Pods {
		p.hosts = h
		p.writeHosts()
	}
}

func (p *Pod) writeHosts() {
	var names []string
	for k := range p.hosts {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n")
	fmt.Fprintf(&b, "%s\t%s\n", p.Net.IP, p.Name)
	for _, n := range names {
		fmt.Fprintf(&b, "%s\t%s\n", p.hosts[n], n)
	}
	path := filepath.Join(p.Root, "etc/hosts")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.lab.t.Fatal(err)
	}
	// In place: the file is bind-mounted, a rename would not be seen.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		p.lab.t.Fatal(err)
	}
	_, _ = f.WriteString(b.String())
	f.Close()
}

// containerCommand is the named container's command and args, and its
// environment (downward-API fields resolved for this pod), as rendered.
func containerCommand(t testing.TB, rc *testutil.Cluster, podName string) (argv, env []string) {
	t.Helper()
	for _, ctr := range rc.StatefulSet.Spec.Template.Spec.Containers {
		if ctr.Name != "named" {
			continue
		}
		argv = append(append(argv, ctr.Command...), ctr.Args...)
		// The image's PATH: Debian puts named in /usr/sbin.
		env = append(env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
		for _, e := range ctr.Env {
			switch {
			case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				env = append(env, e.Name+"="+podName)
			case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
				env = append(env, e.Name+"="+rc.StatefulSet.Namespace)
			case e.ValueFrom != nil:
				t.Fatalf("container env %s: unsupported valueFrom", e.Name)
			default:
				env = append(env, e.Name+"="+e.Value)
			}
		}
		if len(argv) == 0 || argv[0] != layout.AgentBin {
			t.Fatalf("the named container's command is %q, want the agent %s first", argv, layout.AgentBin)
		}
		return argv, env
	}
	t.Fatal("no named container")
	return nil, nil
}

// layVolumes writes (or swaps, kubelet-style) every ConfigMap and Secret
// volume under the pod's tree.
func (p *Pod) layVolumes(rc *testutil.Cluster) {
	t := p.lab.t
	t.Helper()
	for _, m := range testutil.NamedMounts(t, rc) {
		if !m.Projected {
			continue // an emptyDir or the data PVC; an imported Secret: none here
		}
		if !strings.HasPrefix(m.Path, "/etc/bind-fn/") {
			t.Fatalf("mount %s is outside /etc/bind-fn, which the lab binds", m.Path)
		}
		testutil.WriteKubeletDir(t, filepath.Join(p.Root, m.Path), m.Files)
	}
}

// start runs the container command; a restarted pod gets a fresh run
// emptyDir (the data PVC stays).
func (p *Pod) start() {
	run := filepath.Join(p.Root, layout.RunDir)
	_ = os.RemoveAll(run)
	if err := os.MkdirAll(run, 0o755); err != nil {
		p.lab.t.Fatal(err)
	}
	fmt.Fprintf(p.Log, "=== %s: start %s on %s\n", time.Now().Format(time.RFC3339Nano), p.Name, p.Net.IP)
	p.proc = p.lab.startProc(p.Net, p.Root, p.env, p.argv, p.Log)
}

// stop kills the pod's processes (the whole group), as a deleted pod.
func (p *Pod) stop() {
	p.proc.kill(syscall.SIGKILL)
	fmt.Fprintf(p.Log, "=== %s: killed %s\n", time.Now().Format(time.RFC3339Nano), p.Name)
}

// AgentURL is the agent's HTTP endpoint.
func (p *Pod) AgentURL(path string) string {
	return fmt.Sprintf("http://%s:%d%s", p.Net.IP, layout.DefaultMetricsPort, path)
}

// AgentStatus is the part of /status the tests read.
type AgentStatus struct {
	Role              string     `json:"role"`
	AppliedConfigHash string     `json:"appliedConfigHash"`
	LastApply         *time.Time `json:"lastApply"`
	Peers             []struct {
		List string   `json:"list"`
		IPs  []string `json:"ips"`
	} `json:"peers"`
	LastError *struct {
		Message string `json:"message"`
		File    string `json:"file"`
		Line    int    `json:"line"`
	} `json:"lastError"`
	Ready           bool     `json:"ready"`
	Unready         []string `json:"unready"`
	Waiting         string   `json:"waiting"`
	SeenHash        string   `json:"seenHash"`
	NamedPID        int      `json:"namedPID"`
	LastConvergence *struct {
		Updated, Removed, Unchanged int
		Messages, Transfers         int
		Seconds                     float64
		Error                       string
		Time                        time.Time
	} `json:"lastConvergence"`
}

func (p *Pod) Status() (AgentStatus, error) {
	var s AgentStatus
	err := getJSON(p.AgentURL("/status"), &s)
	return s, err
}

// PIDs are the agent's and named's process IDs.
func (p *Pod) PIDs() (agent, named int) {
	s, err := p.Status()
	if err != nil {
		p.lab.t.Fatalf("%s /status: %v", p.Name, err)
	}
	return p.proc.Pid(), s.NamedPID
}

// waitReady waits for every pod's /readyz.
func (c *Cluster) waitReady(timeout time.Duration) {
	t := c.lab.t
	t.Helper()
	for _, p := range c.Pods {
		p.waitReady(timeout)
	}
}

// readyErr waits up to timeout for the pod's /readyz, as an error.
func (p *Pod) readyErr(timeout time.Duration) error {
	return eventually(timeout, 50*time.Millisecond, func() error {
		if p.proc.exited() {
			return fmt.Errorf("exited: %v", p.proc.err)
		}
		code, b, err := httpGet(p.AgentURL("/readyz"))
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("readyz %d: %s", code, b)
		}
		return nil
	})
}

func (p *Pod) waitReady(timeout time.Duration) {
	t := p.lab.t
	t.Helper()
	if err := p.readyErr(timeout); err != nil {
		t.Fatalf("pod %s not ready: %v\n%s", p.Name, err, p.Log.tail(60))
	}
}

// swap re-lays every pod's volumes from a new render (kubelet's ..data swap).
func (c *Cluster) swap(r *Rendered) {
	rc := r.Clusters[c.Name]
	if rc == nil {
		c.lab.t.Fatalf("no cluster %q in the render", c.Name)
	}
	c.r = rc
	for _, p := range c.Pods {
		p.cluster = rc
		p.layVolumes(rc)
	}
}

// swapConfigData swaps a hand-edited copy of the config ConfigMap on every
// pod, in the kubelet's mount (the agent lays it where named reads).
func (c *Cluster) swapConfigData(edit func(key, val string) string) {
	cm := c.r.ConfigMaps[layout.ConfigMapName(c.Name)]
	files := map[string][]byte{}
	for k, v := range cm.Data {
		files[k] = []byte(edit(k, v))
	}
	for _, p := range c.Pods {
		if err := kubeletdir.Write(filepath.Join(p.Root, layout.MountedConfigDir), files); err != nil {
			c.lab.t.Fatal(err)
		}
	}
}

// secretValue reads a key of a rendered Secret.
func (c *Cluster) secretValue(t testing.TB, secret, key string) string {
	t.Helper()
	s := c.r.Secrets[secret]
	if s == nil {
		t.Fatalf("no Secret %q rendered for %s", secret, c.Name)
	}
	if b, ok := s.Data[key]; ok {
		return strings.TrimSpace(string(b))
	}
	if v, ok := s.StringData[key]; ok {
		return strings.TrimSpace(v)
	}
	t.Fatalf("Secret %q has no key %q", secret, key)
	return ""
}

func (c *Cluster) Secondaries() []*Pod { return c.Pods[1:] }

// stop kills every pod of the cluster.
func (c *Cluster) stop() {
	for _, p := range c.Pods {
		p.stop()
	}
}

// pids records every pod's agent and named PIDs.
func (c *Cluster) pids() map[string][2]int {
	out := map[string][2]int{}
	for _, p := range c.Pods {
		a, n := p.PIDs()
		out[p.Name] = [2]int{a, n}
	}
	return out
}
