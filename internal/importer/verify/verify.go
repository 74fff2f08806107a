// Package verify is `bind-fn import --verify`: real BIND as the oracle of
// an import. The original configuration is served by named as it is
// (through an overlay, so named's writes land in a scratch directory and
// the server's files are never changed), the rendered package by the
// bind-fn agent and named as a pod would run it, each in a network
// namespace of its own on a private bridge. Then every imported zone is
// compared by AXFR (canonical RRsets, DNSKEYs, serials), a sample of
// queries is sent to both from an address each view matches (answers,
// AA and RA: who may recurse), and the NOTIFYs both send are caught on
// the bridge and compared per zone. Every difference is a Loss.
//
// It needs root and must run inside private network and mount namespaces
// (the caller enters them with unshare -n -m; see Enter).
package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// EnvInside marks a process that already runs in the namespaces Enter
// makes.
const EnvInside = "BINDFN_VERIFY_INSIDE"

// Inside says whether this process runs in Enter's namespaces.
func Inside() bool { return os.Getenv(EnvInside) == "1" }

// Enter re-runs argv (this program, with its arguments) as PID 1 of fresh
// network, mount and PID namespaces (unshare), so that nothing of the
// verify reaches the host's network or mounts, and returns its exit code.
func Enter(argv []string, stdout, stderr io.Writer) (int, error) {
	if os.Geteuid() != 0 {
		return 1, fmt.Errorf("--verify needs root: it runs named in network and mount namespaces of its own")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return 1, fmt.Errorf("--verify needs unshare (util-linux): %w", err)
	}
	cmd := exec.Command(unshare, append([]string{"-n", "-m", "-p", "--fork", "--kill-child=SIGKILL", "--mount-proc", "--propagation", "private", "--"}, argv...)...)
	cmd.Env = append(os.Environ(), EnvInside+"=1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), nil
		}
		return 1, err
	}
	return 0, nil
}

// Options of a verify.
type Options struct {
	// Conf is the original named.conf; ZoneDir named's directory.
	Conf, ZoneDir string
	// Result is the import.
	Result *importer.Result
	// Named is the named binary for the original (BIND's).
	Named string
	// Usr, when set, is a BIND root's usr directory, bound (read-only)
	// over /usr for both servers, in mount namespaces of their own: the
	// original's named and the pod's agent, named, named-checkconf and
	// rndc are then that release's (Named names it as it runs there,
	// /usr/sbin/named). Empty: the host's programs.
	Usr string
	// Agent is the command that runs bind-fn-agent (it replaces the
	// container command's first word); AgentEnv is added to its
	// environment.
	Agent    []string
	AgentEnv []string
	// Work is a scratch directory (overlay upper directories, the pod's
	// tree, logs).
	Work string
	// Timeout bounds each wait (servers up, NOTIFYs): a bound against
	// hanging, not a performance target. Default 90s.
	Timeout time.Duration
	// Log gets progress lines.
	Log io.Writer
	// ListenOn are the IPv4 addresses of the original's listen-on (none:
	// it listens on every address): they are given to its namespace and
	// queries go to the first.
	ListenOn []string
}

// ListenOn reads the IPv4 addresses of a configuration's options
// listen-on (nil when it listens on any).
func ListenOn(conf []namedconf.Located) []string {
	var out []string
	for _, s := range conf {
		if s.Name() != "options" {
			continue
		}
		for _, b := range s.Body {
			if b.Name() != "listen-on" || len(b.Words) > 1 {
				continue // listen-on port N { ... }: not followed here
			}
			for _, e := range b.Body {
				a, err := netip.ParseAddr(e.Name())
				if e.Name() == "any" {
					return nil
				}
				if err == nil && a.Is4() && !a.IsLoopback() {
					out = append(out, a.String())
				}
			}
		}
	}
	return out
}

// Summary counts what was compared.
type Summary struct {
	Zones, Queries, Notifies int
	// Notes are what could not be compared, and why.
	Notes []string
}

type server struct {
	name, ip string
	cmd      *exec.Cmd
	log      *bytes.Buffer
	// done is closed when cmd has ended.
	done chan struct{}
}

// Run verifies. Losses are the differences; the error is a verify that
// could not run (a server that does not start).
func Run(opt Options) ([]importer.Loss, *Summary, error) {
	if !Inside() {
		return nil, nil, fmt.Errorf("verify.Run outside its namespaces: call Enter")
	}
	if opt.Timeout == 0 {
		opt.Timeout = 90 * time.Second
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	v := &verifier{opt: opt, sum: &Summary{}}
	defer v.stop()
	if err := v.start(); err != nil {
		return nil, nil, err
	}
	v.compare()
	sort.Slice(v.losses, func(i, j int) bool {
		a, b := v.losses[i], v.losses[j]
		if a.Where != b.Where {
			return a.Where < b.Where
		}
		return a.What < b.What
	})
	return v.losses, v.sum, nil
}

type verifier struct {
	// labLock is held shared from mountPoints to stop (see labLock).
	labLock *os.File
	opt     Options
	sum     *Summary
	losses  []importer.Loss
	orig    *server
	rend    *server
	clients []client
	// keys are every TSIG key by name (imported and rendered).
	keys map[string]namedconf.KeyStmt
	// cluster is the rendered cluster's name.
	cluster string
	// notifies caught: server IP -> zone -> target addresses.
	mu       sync.Mutex
	notifies map[string]map[string][]string
	conns    []*dns.Server
	// mounts are this verify's mounts in the order made (stop unmounts
	// them last first).
	mounts []string
	// overlays are the directories of mounts that got an overlay (overlay).
	overlays []string
	// origAddr is where the original answers.
	origAddr string
}

func (v *verifier) lose(where, what, why string) {
	v.losses = append(v.losses, importer.Loss{Where: where, What: what, Why: why})
}

func (v *verifier) logf(format string, args ...any) {
	fmt.Fprintf(v.opt.Log, "verify: "+format+"\n", args...)
}

func (v *verifier) start() error {
	res := v.opt.Result
	var views []*v1alpha1.BindView
	for _, o := range res.Objects["views.yaml"] {
		views = append(views, o.(*v1alpha1.BindView))
	}
	var acls []*v1alpha1.BindACL
	for _, o := range res.Objects["acls.yaml"] {
		acls = append(acls, o.(*v1alpha1.BindACL))
	}
	c := res.Objects["cluster.yaml"][0].(*v1alpha1.BindCluster)
	v.clients = clients(views, acls, v.opt.ListenOn, c.Spec.AllowRecursion, c.Spec.AllowQuery)
	if err := v.mountScratch(); err != nil {
		return err
	}
	// The pod paths first: an overlay privateDir lays over a parent
	// (/etc) must lie below the original's overlays (/etc/bind), not hide
	// them.
	if err := v.mountPoints(); err != nil {
		return err
	}
	if err := v.setupBridge(); err != nil {
		return err
	}
	for _, c := range v.clients {
		for _, a := range c.all {
			if err := addAddr(a); err != nil {
				return err
			}
		}
	}
	if err := v.listenNotify(); err != nil {
		return err
	}
	v.keys = map[string]namedconf.KeyStmt{}
	for _, s := range res.Secrets {
		if n, sec := s.StringData["keyName"], s.StringData["secret"]; n != "" && sec != "" {
			v.keys[n] = namedconf.KeyStmt{Name: n, Algorithm: s.StringData["algorithm"], Secret: sec}
		}
	}
	if err := v.startOriginal(); err != nil {
		return err
	}
	if err := v.startRendered(); err != nil {
		return err
	}
	return v.waitUp()
}

// overlayDirs are the directories named may write to: the config's, its
// working directory, and Debian's state directories. Each gets an overlay
// whose upper half is scratch, so the server's own files never change.
func (v *verifier) overlayDirs() []string {
	cands := []string{filepath.Dir(v.opt.Conf), v.opt.ZoneDir, "/var/cache/bind", "/run/named", "/var/lib/bind"}
	var dirs []string
	for _, d := range cands {
		if d == "" {
			continue
		}
		d = filepath.Clean(d)
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var top []string
	for _, d := range dirs {
		if len(top) > 0 && atOrBelow(d, top[len(top)-1]) {
			continue
		}
		top = append(top, d)
	}
	return top
}

func (v *verifier) startOriginal() error {
	for _, d := range v.overlayDirs() {
		if err := v.overlay(d, v.scratch()); err != nil {
			return fmt.Errorf("cannot lay a scratch overlay over %s (named's writes must not reach the server's files): %w", d, err)
		}
	}
	if err := addNetns("bfv-orig", "vorig", origIP); err != nil {
		return err
	}
	v.origAddr = origIP
	for i, a := range v.opt.ListenOn {
		// The original listens on its own addresses only: it gets them,
		// reached through its namespace.
		if err := run("ip", "-n", "bfv-orig", "addr", "add", a+"/32", "dev", "eth0"); err != nil {
			return err
		}
		if err := run("ip", "route", "add", a+"/32", "via", origIP); err != nil {
			return err
		}
		if i == 0 {
			v.origAddr = a
		}
	}
	script := "cd " + shellQuote(filepath.Dir(v.opt.Conf)) + " && exec " + shellQuote(v.opt.Named) + " -g -c " + shellQuote(v.opt.Conf)
	v.orig = &server{name: "original", ip: v.origAddr, log: &bytes.Buffer{}}
	v.orig.cmd = exec.Command("ip", "netns", "exec", "bfv-orig", "unshare", "-m", "--propagation", "private", "--", "/bin/sh", "-c", usrScript+script)
	v.orig.cmd.Env = append(os.Environ(), "BINDFN_USR="+v.opt.Usr)
	return v.spawn(v.orig)
}

func (v *verifier) spawn(s *server) error {
	s.cmd.Stdout, s.cmd.Stderr = &syncWriter{b: s.log, mu: &v.mu}, &syncWriter{b: s.log, mu: &v.mu}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	v.logf("starting the %s server on %s", s.name, s.ip)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	return nil
}

type syncWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// usrScript binds $BINDFN_USR (Options.Usr) over /usr when it is set: the
// last mount (a BIND root need not hold a mount program).
const usrScript = `if [ -n "$BINDFN_USR" ]; then mount --bind -o ro "$BINDFN_USR" /usr || exit 1; fi; `

// podScript binds the pod's tree over the pod paths in a private mount
// namespace and runs the container command with its environment only.
const podScript = `set -e
mount --make-rprivate /
mount --bind "$POD_ROOT/etc/bind-fn" /etc/bind-fn
mount --bind "$POD_ROOT/run/bind-fn" /run/bind-fn
mount --bind "$POD_ROOT/var/lib/bind" /var/lib/bind
mount --bind "$POD_ROOT/etc/hosts" /etc/hosts
` + usrScript + `
eval "exec env -i $POD_ENV \"\$@\""
`

// startRendered renders the package (one replica: the primary) and runs
// its pod: the agent and named, with the rendered ConfigMaps and Secrets
// and the Secrets the import wrote apart (as the user creates them).
func (v *verifier) startRendered() error {
	res := v.opt.Result
	c := res.Objects["cluster.yaml"][0].(*v1alpha1.BindCluster)
	v.cluster = c.Name
	replicas := c.Spec.Replicas
	c.Spec.Replicas = 1
	items, err := res.Items()
	c.Spec.Replicas = replicas
	if err != nil {
		return err
	}
	// From the import's state: the served serials (Result.State).
	objs, rs := pipeline.Run(pipeline.Input{Items: items, Previous: res.Previous()}, render.Options{Rand: zeroRand{}})
	if rs.HasErrors() {
		return fmt.Errorf("the imported package does not render: %v", rs)
	}
	cms, secrets := map[string]*corev1.ConfigMap{}, map[string]*corev1.Secret{}
	var sts *appsv1.StatefulSet
	for _, o := range objs {
		switch x := o.Obj.(type) {
		case *corev1.ConfigMap:
			cms[x.Name] = x
		case *corev1.Secret:
			secrets[x.Name] = x
		case *appsv1.StatefulSet:
			sts = x
		}
	}
	if sts == nil {
		return fmt.Errorf("the render has no StatefulSet")
	}
	for _, s := range res.Secrets {
		secrets[s.Name] = s
	}
	for _, s := range secrets {
		for _, f := range []string{layout.KeyConfFile} {
			text := string(s.Data[f]) + s.StringData[f]
			if ks, err := namedconf.ParseKeys(text); err == nil {
				for _, k := range ks {
					v.keys[k.Name] = k
				}
			}
		}
	}
	root := filepath.Join(v.scratch(), "pod")
	if err := v.layPod(root, sts, cms, secrets); err != nil {
		return err
	}
	argv, env, err := v.containerCommand(sts)
	if err != nil {
		return err
	}
	if err := addNetns("bfv-rend", "vrend", rendIP); err != nil {
		return err
	}
	var quoted []string
	for _, e := range append(env, v.opt.AgentEnv...) {
		quoted = append(quoted, shellQuote(e))
	}
	v.rend = &server{name: "rendered", ip: rendIP, log: &bytes.Buffer{}}
	v.rend.cmd = exec.Command("ip", append([]string{"netns", "exec", "bfv-rend", "unshare", "-m", "--propagation", "private", "--", "/bin/sh", "-c", podScript, "pod"}, argv...)...)
	v.rend.cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "POD_ROOT=" + root, "POD_ENV=" + strings.Join(quoted, " "), "BINDFN_USR=" + v.opt.Usr}
	return v.spawn(v.rend)
}

// zeroRand is the render's randomness for generated keys: the verify's
// keys never leave it.
type zeroRand struct{}

func (zeroRand) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(i*7 + 1)
	}
	return len(p), nil
}

func (v *verifier) layPod(root string, sts *appsv1.StatefulSet, cms map[string]*corev1.ConfigMap, secrets map[string]*corev1.Secret) error {
	spec := sts.Spec.Template.Spec
	vols := map[string]corev1.Volume{}
	for _, vol := range spec.Volumes {
		vols[vol.Name] = vol
	}
	for _, ctr := range spec.Containers {
		if ctr.Name != "named" {
			continue
		}
		for _, m := range ctr.VolumeMounts {
			vol := vols[m.Name]
			files := map[string][]byte{}
			switch {
			case vol.ConfigMap != nil:
				if cm := cms[vol.ConfigMap.Name]; cm != nil {
					for k, s := range cm.Data {
						files[k] = []byte(s)
					}
				}
			case vol.Secret != nil:
				s := secrets[vol.Secret.SecretName]
				if s == nil {
					continue
				}
				for k, b := range s.Data {
					files[k] = b
				}
				for k, t := range s.StringData {
					files[k] = []byte(t)
				}
			default:
				continue
			}
			if !strings.HasPrefix(m.MountPath, "/etc/bind-fn/") {
				return fmt.Errorf("mount %s is outside /etc/bind-fn", m.MountPath)
			}
			if err := kubeletdir.Write(filepath.Join(root, m.MountPath), files); err != nil {
				return err
			}
		}
	}
	for _, d := range []string{layout.RunDir, layout.DataDir, "/etc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	hosts := fmt.Sprintf("127.0.0.1\tlocalhost\n%s\t%s %s.%s\n%s\t%s-0.%s %s-0.%s.%s\n", rendIP, layout.PrimaryServiceName(v.cluster), layout.PrimaryServiceName(v.cluster), sts.Namespace,
		rendIP, v.cluster, layout.HeadlessServiceName(v.cluster), v.cluster, layout.HeadlessServiceName(v.cluster), sts.Namespace)
	return os.WriteFile(filepath.Join(root, "etc", "hosts"), []byte(hosts), 0o644)
}

// labLock is the lock every running multi-pod lab (test/multipod) holds
// shared while the pod mount points it made on the host are in use.
const labLock = "/run/bind-fn-lab.lock"

// podPaths are the fixed paths the pod's tree is bound over.
var podPaths = []string{"/etc/bind-fn", layout.RunDir, layout.DataDir}

// mountPoints makes the pod paths the pod's tree is bound over, in this
// mount namespace only (privateDir).
func (v *verifier) mountPoints() error {
	// The multi-pod lab makes and removes the same paths on the host; the
	// last lab to finish removes them unless it can lock labLock
	// exclusively. Holding it shared for the whole verify keeps them from
	// being pulled from under this one (a path found existing gets no
	// overlay). Taken before any overlay: one over /run would hide the
	// host's lock file.
	if f, err := os.OpenFile(labLock, os.O_RDONLY|os.O_CREATE, 0o644); err == nil {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_SH) == nil {
			v.labLock = f
		} else {
			f.Close()
		}
	}
	for _, d := range podPaths {
		if err := v.privateDir(d); err != nil {
			return err
		}
	}
	return nil
}

// privateDir makes dir exist in this mount namespace only. A missing dir's
// nearest existing ancestor gets an overlay whose upper half is the
// verify's scratch tmpfs, and dir is made there: the host's file system
// never holds it, so nothing is left behind and nothing is shared with
// another verify or a multi-pod lab (which make and remove the same paths
// on the host under /run/bind-fn-lab.lock). Every mount goes with the
// namespace, and stop unmounts them first.
func (v *verifier) privateDir(dir string) error {
	anc := filepath.Clean(dir)
	for {
		if fi, err := os.Stat(anc); err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("cannot make %s: %s is not a directory", dir, anc)
			}
			break
		}
		anc = filepath.Dir(anc)
	}
	if anc == filepath.Clean(dir) {
		return nil
	}
	if anc == "/" {
		return fmt.Errorf("cannot make %s without an overlay over / (its parent is missing)", dir)
	}
	if err := v.overlay(anc, v.scratch()); err != nil {
		return fmt.Errorf("cannot make %s in this mount namespace only (an overlay over %s): %w", dir, anc, err)
	}
	return os.MkdirAll(dir, 0o755)
}

// scratch is a tmpfs of this mount namespace under Work (mountScratch):
// the upper halves of every overlay and the pod's tree, so that nothing
// the servers write reaches the host's disks.
func (v *verifier) scratch() string {
	return filepath.Join(v.opt.Work, "scratch")
}

func (v *verifier) mountScratch() error {
	if err := os.MkdirAll(v.scratch(), 0o700); err != nil {
		return err
	}
	if err := run("mount", "-t", "tmpfs", "-o", "mode=0700", "bind-fn-verify", v.scratch()); err != nil {
		return fmt.Errorf("cannot mount the verify's scratch tmpfs: %w", err)
	}
	v.mounts = append(v.mounts, v.scratch())
	return nil
}

// overlay lays an overlay over dir whose writes land under base, and
// records it for stop.
//
// A dir at or below a directory that already has one of this verify's
// overlays is private already (its writes land in that overlay's upper
// half): it gets none. Stacking one would also fail on a machine whose
// pod paths are missing under /run or /etc (privateDir overlays their
// parent): the kernel refuses a third level ("overlayfs: maximum fs
// stacking depth exceeded"), which a fresh machine's cold run hit with
// Debian's /run/named.
func (v *verifier) overlay(dir, base string) error {
	if v.overlaid(dir) {
		return nil
	}
	n := len(v.mounts)
	up, work := filepath.Join(base, fmt.Sprintf("overlay%d", n), "upper"), filepath.Join(base, fmt.Sprintf("overlay%d", n), "work")
	for _, d := range []string{up, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := run("mount", "-t", "overlay", "overlay", "-o", "lowerdir="+dir+",upperdir="+up+",workdir="+work, dir); err != nil {
		return err
	}
	v.mounts = append(v.mounts, dir)
	v.overlays = append(v.overlays, dir)
	return nil
}

// overlaid reports whether dir is at or below a directory this verify
// has laid an overlay over.
func (v *verifier) overlaid(dir string) bool {
	dir = filepath.Clean(dir)
	for _, o := range v.overlays {
		if atOrBelow(dir, o) {
			return true
		}
	}
	return false
}

// atOrBelow reports whether the clean path dir is top or lies below it.
func atOrBelow(dir, top string) bool {
	return dir == top || strings.HasPrefix(dir, strings.TrimSuffix(top, "/")+"/")
}

func (v *verifier) containerCommand(sts *appsv1.StatefulSet) (argv, env []string, err error) {
	for _, ctr := range sts.Spec.Template.Spec.Containers {
		if ctr.Name != "named" {
			continue
		}
		argv = append(append(argv, ctr.Command...), ctr.Args...)
		if len(argv) == 0 || argv[0] != layout.AgentBin {
			return nil, nil, fmt.Errorf("the named container's command is %q, want the agent first", argv)
		}
		argv = append(append([]string(nil), v.opt.Agent...), argv[1:]...)
		env = append(env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
		pod := v.cluster + "-0"
		for _, e := range ctr.Env {
			switch {
			case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				env = append(env, e.Name+"="+pod)
			case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
				env = append(env, e.Name+"="+sts.Namespace)
			case e.ValueFrom != nil:
				return nil, nil, fmt.Errorf("container env %s: unsupported valueFrom", e.Name)
			default:
				env = append(env, e.Name+"="+e.Value)
			}
		}
		return argv, env, nil
	}
	return nil, nil, fmt.Errorf("no named container")
}

// waitUp waits until both servers answer, and answer every imported
// zone's SOA with authority (bounded by Timeout).
func (v *verifier) waitUp() error {
	deadline := time.Now().Add(v.opt.Timeout)
	for _, s := range []*server{v.orig, v.rend} {
		for {
			missing := v.unloaded(s)
			if len(missing) == 0 {
				break
			}
			if time.Now().After(deadline) || exited(s) {
				v.mu.Lock()
				log := tail(s.log.String(), 30)
				v.mu.Unlock()
				return fmt.Errorf("the %s server does not serve %s (within %s); its log ends:\n%s", s.name, strings.Join(missing, ", "), v.opt.Timeout, log)
			}
			time.Sleep(300 * time.Millisecond)
		}
		v.logf("the %s server serves every zone", s.name)
	}
	return nil
}

// exited says whether the server's process has ended (a server that dies
// at start-up fails the wait at once, with its log).
func exited(s *server) bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

func (v *verifier) unloaded(s *server) []string {
	var out []string
	// A server answers at all (any rcode) before its zones are asked: a
	// package without zones would otherwise be "up" before named listens.
	if _, err := v.query(s, "", ".", dns.TypeSOA, false); err != nil {
		if c := v.clientOf(""); localDialError(err) {
			// Not the server's fault: the query never left this side.
			return []string{fmt.Sprintf("any query: the verify cannot send one from client address %q (%v): a fault of the verify, not of the %s server", c.src, err, s.name)}
		}
		return []string{"any query (" + err.Error() + ")"}
	}
	for _, z := range v.opt.Result.Zones {
		if z.Kind != "zone" {
			continue
		}
		m, err := v.query(s, z.View, z.Name, dns.TypeSOA, false)
		if err != nil || m.Rcode != dns.RcodeSuccess || !m.Authoritative {
			out = append(out, zoneID(z.View, z.Name))
		}
	}
	return out
}

// localDialError reports whether err failed on the client's side before
// anything reached a server: the source address cannot be bound or cannot
// route to the server.
func localDialError(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EADDRNOTAVAIL)
}

func zoneID(view, zone string) string {
	if view == "" {
		return zone
	}
	return view + "/" + zone
}

func (v *verifier) clientOf(view string) client {
	for _, c := range v.clients {
		if c.view == view {
			return c
		}
	}
	if len(v.clients) > 0 && view == "" {
		return v.clients[0]
	}
	return client{view: view, src: "198.51.100.199"}
}

func (v *verifier) stop() {
	for _, s := range []*server{v.orig, v.rend} {
		if s != nil && s.cmd != nil && s.cmd.Process != nil {
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	}
	for _, c := range v.conns {
		_ = c.Shutdown()
	}
	for _, n := range []string{"bfv-orig", "bfv-rend"} {
		_ = exec.Command("ip", "netns", "del", n).Run()
	}
	_ = exec.Command("ip", "link", "del", bridge).Run()
	// The mounts go with the mount namespace; unmount them now so the
	// next verify in this namespace starts from the server's files.
	for _, d := range slices.Backward(v.mounts) {
		_ = exec.Command("umount", d).Run()
	}
	if v.labLock != nil {
		_ = v.labLock.Close() // releases the shared lock
		v.labLock = nil
	}
}

// serials compares: the rendered serial must not be below the original's
// (the server's secondaries transfer only a higher one).
// A signed zone's serial is BIND's to raise each time it re-signs, on
// both sides as they start: there the rendered one must not be below the
// serial the original served when it was imported (the one its
// secondaries hold), which the import carried.
func (v *verifier) serialCheck(where, id string, orig, rend []dns.RR, signed bool, pinned uint32) {
	_, so := plan.ZoneDataOf(orig)
	_, sr := plan.ZoneDataOf(rend)
	if signed && pinned != 0 {
		if int32(sr-pinned) < 0 {
			v.lose(where, "zone "+id+" serial", fmt.Sprintf("the rendered signed zone serves serial %d, below %d, the one the original served at import: its secondaries never transfer again", sr, pinned))
		}
		return
	}
	if sr != so {
		why := fmt.Sprintf("the original serves serial %d, the rendered %d", so, sr)
		if int32(sr-so) < 0 {
			why += ": below the original, so its secondaries never transfer again"
		}
		v.lose(where, "zone "+id+" serial", why)
	}
}
