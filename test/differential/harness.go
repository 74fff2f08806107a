// Package differential checks fn-validate against real BIND (docs/design.md#differential):
// random packages from test/pkggen go through the pipeline fn-validate
// runs; what it accepts is rendered, laid out where the pod mounts it, and
// handed to named-checkconf -z (both roles), named-checkzone -k fail (every
// zone file) and named itself (primary and one secondary, each in a private
// network and mount namespace) until every zone has loaded. What it refuses
// is rendered with the checks bypassed and handed to the same BIND checks.
//
// A divergence is a package on which the two disagree: accepted but BIND
// refuses it, or refused although BIND loads it (and docs/validation.md
// does not name the refusal). The shrinker reduces each to a minimal package,
// kept under testdata/divergences.
package differential

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// Stages of BIND's verdict.
const (
	StageLayout    = "layout"
	StageCheckconf = "named-checkconf"
	StageCheckzone = "named-checkzone"
	StageNamed     = "named"
	StageTransfer  = "transfer"
)

// Failure is one thing BIND refused.
type Failure struct {
	Stage   string
	Cluster string
	Where   string // role or zone
	Msg     string // BIND's own words
}

func (f Failure) String() string {
	return fmt.Sprintf("%s %s %s: %s", f.Stage, f.Cluster, f.Where, f.Msg)
}

// Verdict is fn-validate's and BIND's view of one package.
type Verdict struct {
	Accepted bool
	Errors   []string // fn-validate's errors
	// BIND's failures on the render (accepted) or on the render with the
	// checks bypassed (refused; Rendered false when even that failed).
	BIND     []Failure
	Rendered bool
	Bypass   string // why the bypass render is not available
}

// Options of a check.
type Options struct {
	// Named starts named on the primary and one secondary role.
	Named bool
	// Bypass renders refused packages with the checks skipped, to ask BIND.
	Bypass bool
	// Transfer runs the primary and a secondary joined by a veth pair and
	// waits until the secondary has transferred every zone (else each role
	// runs alone and the secondary only has to start).
	Transfer bool
	// Stages, when set, stops after the first stage with a failure in it
	// (the shrinker only needs to know that a failure persists).
	FirstFailure bool
}

// soft is a testing.TB whose Fatal panics, so one package's layout failure
// does not end a run of thousands.
type soft struct{ testing.TB }

type fatal struct{ msg string }

func (s soft) Helper()                           {}
func (s soft) Fatal(args ...any)                 { panic(fatal{fmt.Sprint(args...)}) }
func (s soft) Fatalf(format string, args ...any) { panic(fatal{fmt.Sprintf(format, args...)}) }
func (s soft) FailNow()                          { panic(fatal{"FailNow"}) }
func (s soft) Skipf(format string, args ...any)  { panic(fatal{fmt.Sprintf(format, args...)}) }

// Check is the verdict of fn-validate and BIND on one package.
func Check(t testing.TB, items []model.Item, opt Options) Verdict {
	objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	var v Verdict
	if !rs.HasErrors() {
		v.Accepted, v.Rendered = true, true
		v.BIND = BINDCheck(t, objs, opt)
		return v
	}
	for _, r := range rs {
		if r.Severity == diag.Error {
			v.Errors = append(v.Errors, r.String())
		}
	}
	if !opt.Bypass {
		return v
	}
	objs, renderErrs, why := bypassRender(items)
	if objs == nil {
		v.Bypass = why
		return v
	}
	v.BIND = BINDCheck(t, objs, opt)
	v.Rendered = true
	for _, f := range v.BIND {
		// the bypass render leaves out what the renderer could not build:
		// BIND's refusal then says nothing about the input
		if bypassArtifact.MatchString(f.Msg) {
			v.Rendered, v.Bypass = false, "the bypass render is incomplete: "+f.Msg
			return v
		}
	}
	// Every refused value must reach BIND, or BIND's verdict is not about
	// the input: values the renderer refuses are left out of the render,
	// and (one home for every check, docs/design.md#checks) so is every value the model refuses. So each
	// error's value goes to BIND in a probe of its own (extraOptions, policy
	// durations: a minimal named.conf) or must appear verbatim in the bypass
	// render; otherwise the package is not askable.
	text := strings.ToLower(renderedText(objs))
	var errs diag.Results
	for _, r := range rs {
		if r.Severity == diag.Error {
			errs = append(errs, r)
		}
	}
	probed := map[string]bool{}
	for _, r := range append(errs, renderErrs...) {
		if conf, ok := probeConf(items, r); ok {
			if probed[conf] {
				continue
			}
			probed[conf] = true
			if out, err := probe(t, conf); err != nil {
				v.BIND = append(v.BIND, Failure{Stage: StageCheckconf, Cluster: r.Source.Ref.Name, Where: "probe of " + r.Field, Msg: out})
			}
			continue
		}
		val, ok := valueAt(items, r)
		if !ok || !strings.Contains(text, strings.ToLower(val)) {
			v.Rendered, v.Bypass = false, "the refused value is not in the bypass render: "+r.String()
			return v
		}
	}
	return v
}

// renderedText is every ConfigMap and Secret value of a render.
func renderedText(objs []render.Object) string {
	var b strings.Builder
	for _, o := range objs {
		switch x := o.Obj.(type) {
		case *corev1.ConfigMap:
			for _, k := range slices.Sorted(maps.Keys(x.Data)) {
				b.WriteString(x.Data[k])
				b.WriteByte('\n')
			}
		case *corev1.Secret:
			for _, d := range x.Data {
				b.Write(d)
				b.WriteByte('\n')
			}
			for _, d := range x.StringData {
				b.WriteString(d)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

var fieldSeg = regexp.MustCompile(`^([A-Za-z]+)(?:\[(\d+)\])?$`)

// valueAt is the string at a result's field path (spec.records[2].name) in
// its object, as the user wrote it.
func valueAt(items []model.Item, r diag.Result) (string, bool) {
	spec := specOf(items, r.Source.Ref.Kind, r.Source.Ref.Name)
	if spec == nil || !strings.HasPrefix(r.Field, "spec.") {
		return "", false
	}
	var cur any = spec
	for _, seg := range strings.Split(strings.TrimPrefix(r.Field, "spec."), ".") {
		m := fieldSeg.FindStringSubmatch(seg)
		obj, ok := cur.(map[string]any)
		if m == nil || !ok {
			return "", false
		}
		cur = obj[m[1]]
		if m[2] != "" {
			list, ok := cur.([]any)
			n, _ := strconv.Atoi(m[2])
			if !ok || n >= len(list) {
				return "", false
			}
			cur = list[n]
		}
	}
	s, ok := cur.(string)
	return s, ok && s != ""
}

// bypassRender renders with every check skipped: decode, resolve, render,
// ignoring their results. It is how the harness asks BIND about a package
// fn-validate refuses. renderErrs are the errors of the renderer itself (it
// leaves those values out). Nil objects when the model cannot be built or
// render panics.
func bypassRender(items []model.Item) (objs []render.Object, renderErrs diag.Results, why string) {
	defer func() {
		if r := recover(); r != nil {
			objs, why = nil, fmt.Sprintf("render panicked: %v", r)
		}
	}()
	set, _ := model.Decode(items)
	clusters, _ := model.Build(set)
	if len(clusters) == 0 {
		return nil, nil, "no cluster could be resolved"
	}
	zones := &zonefile.Cache{}
	zones.BuildAll(clusters)
	objs, rs := render.Render(clusters, nil, zones, render.Options{Rand: &testutil.DetRand{}})
	if len(objs) == 0 {
		return nil, nil, "render produced nothing"
	}
	for _, r := range rs {
		if r.Severity == diag.Error {
			renderErrs = append(renderErrs, r)
		}
	}
	return objs, renderErrs, ""
}

var reExtra = regexp.MustCompile(`^spec\.extraOptions(\[\d+\])?$`)

// probeConf is a minimal named.conf holding the raw value a render error
// is about, written as a user would paste it (each extraOptions item on
// its own lines, closed by a ";" line, so a trailing comment stays one).
func probeConf(items []model.Item, r diag.Result) (string, bool) {
	spec := specOf(items, r.Source.Ref.Kind, r.Source.Ref.Name)
	if spec == nil {
		return "", false
	}
	switch {
	case r.Source.Ref.Kind == "BindCluster" && reExtra.MatchString(r.Field):
		list, _ := spec["extraOptions"].([]any)
		var b strings.Builder
		b.WriteString("options {\n\tdirectory \"/tmp\";\n")
		for _, e := range list {
			s, _ := e.(string)
			s = strings.TrimSuffix(strings.TrimSpace(s), ";")
			fmt.Fprintf(&b, "\t%s\n\t;\n", s)
		}
		b.WriteString("};\n")
		return b.String(), true
	case r.Source.Ref.Kind == "BindDNSSECPolicy" && isPolicyDuration(r.Field):
		d, _ := vocab.PolicyDurationByField(strings.TrimPrefix(r.Field, "spec."))
		val, _ := spec[d.Field].(string)
		return fmt.Sprintf("dnssec-policy \"probe\" {\n\t%s %s;\n};\noptions { directory \"/tmp\"; };\n", d.Keyword, val), true
	}
	return "", false
}

// isPolicyDuration: field is a BindDNSSECPolicy duration (spec.dnskeyTTL).
func isPolicyDuration(field string) bool {
	_, ok := vocab.PolicyDurationByField(strings.TrimPrefix(field, "spec."))
	return ok
}

func specOf(items []model.Item, kind, name string) map[string]any {
	for _, it := range items {
		if it.Source.Ref.Kind != kind || it.Source.Ref.Name != name {
			continue
		}
		var obj map[string]any
		if json.Unmarshal(it.JSON, &obj) != nil {
			return nil
		}
		spec, _ := obj["spec"].(map[string]any)
		return spec
	}
	return nil
}

// probe runs named-checkconf on a config text.
func probe(t testing.TB, conf string) (string, error) {
	f, err := os.CreateTemp("", "bindfn-probe-*.conf")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(conf); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := bindtools.OnEvery(t, func(r bindtools.Release) (string, error) {
		o, err := r.Offline(t, "named-checkconf", f.Name()).CombinedOutput()
		return string(o), err
	})
	return strings.TrimSpace(strings.ReplaceAll(out, f.Name(), "probe.conf")), err
}

var bypassArtifact = regexp.MustCompile(`file not found|writeable file '':|file ""`)

// BINDCheck lays out every cluster's pod for both roles and asks BIND.
func BINDCheck(t testing.TB, objs []render.Object, opt Options) (fails []Failure) {
	st := soft{t}
	var clusters map[string]*testutil.Cluster
	if f := guard(func() { clusters = testutil.Clusters(st, objs) }); f != "" {
		return []Failure{{Stage: StageLayout, Msg: f}}
	}
	names := slices.Sorted(maps.Keys(clusters))
	for _, n := range names {
		fails = append(fails, checkCluster(t, clusters[n], opt)...)
		if opt.FirstFailure && len(fails) > 0 {
			return fails
		}
	}
	return fails
}

func guard(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			if ft, ok := r.(fatal); ok {
				msg = ft.msg
				return
			}
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

var roles = []string{layout.NamedConfPrimary, layout.NamedConfSecondary}

func roleOf(conf string) string { return strings.TrimPrefix(conf, "named.conf.") }

// layPod lays out one role's pod in a fresh directory: what the StatefulSet
// mounts, the agent's runtime files stood in (testutil.LayPod), and the
// data directories the agent creates.
func layPod(t testing.TB, c *testutil.Cluster) (string, string) {
	root, err := os.MkdirTemp("", "bindfn-diff-")
	if err != nil {
		t.Fatal(err)
	}
	msg := guard(func() {
		st := soft{t}
		testutil.LayPod(st, root, c)
		doc := testutil.AgentConfig(st, c)
		for _, d := range doc.DataDirs {
			if err := os.MkdirAll(filepath.Join(root, layout.DataDir, filepath.Clean("/"+d)), 0o755); err != nil {
				st.Fatal(err)
			}
		}
		for _, d := range []string{layout.RunDir, layout.DataDir, "/.ovl"} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				st.Fatal(err)
			}
		}
	})
	return root, dataTmp.ReplaceAllString(trimPaths(msg, root), "..data")
}

var dataTmp = regexp.MustCompile(`\.\.data_tmp_\d+`)

func checkCluster(t testing.TB, c *testutil.Cluster, opt Options) (fails []Failure) {
	type pod struct {
		conf, root string
		ok         bool
	}
	var pods []*pod
	defer func() {
		for _, p := range pods {
			_ = os.RemoveAll(p.root)
		}
	}()
	for _, conf := range roles {
		root, msg := layPod(t, c)
		p := &pod{conf: conf, root: root}
		pods = append(pods, p)
		if msg != "" {
			fails = append(fails, Failure{Stage: StageLayout, Cluster: c.Name, Where: roleOf(conf), Msg: msg})
			continue
		}
		out, err := bindtools.NamedCheckconf(t, root, layout.ConfigFile(conf))
		if err != nil {
			fails = append(fails, Failure{Stage: StageCheckconf, Cluster: c.Name, Where: roleOf(conf), Msg: trimPaths(out, root)})
			continue
		}
		p.ok = true
	}
	if opt.FirstFailure && len(fails) > 0 {
		return fails
	}
	// named-checkzone -k fail on every zone file of the primary role.
	var zones []zoneFile
	if pods[0].ok {
		zones = zoneFiles(t, pods[0].root, layout.ConfigFile(layout.NamedConfPrimary))
		for _, z := range zones {
			out, err := bindtools.OnEvery(t, func(r bindtools.Release) (string, error) {
				o, err := r.Offline(t, "named-checkzone", "-k", "fail", "-i", "local", z.name, filepath.Join(pods[0].root, z.file)).CombinedOutput()
				return string(o), err
			})
			if err != nil {
				where := z.name
				if z.view != "" {
					where += " in view " + z.view
				}
				fails = append(fails, Failure{Stage: StageCheckzone, Cluster: c.Name, Where: where, Msg: trimPaths(out, pods[0].root)})
			}
		}
	}
	if !opt.Named || (opt.FirstFailure && len(fails) > 0) {
		return fails
	}
	// Replication exists only with secondaries: one replica has none.
	replicated := c.StatefulSet != nil && (c.StatefulSet.Spec.Replicas == nil || *c.StatefulSet.Spec.Replicas > 1)
	if opt.Transfer && replicated && pods[0].ok && pods[1].ok {
		return append(fails, runPair(t, c, pods[0].root, pods[1].root, zones)...)
	}
	// named on both roles, at once (separate roots: separate lock files).
	type res struct {
		f   []Failure
		idx int
	}
	ch := make(chan res, len(pods))
	n := 0
	for i, p := range pods {
		if !p.ok {
			continue
		}
		n++
		go func(i int, p *pod) {
			ch <- res{runNamed(t, c.Name, p.root, p.conf), i}
		}(i, p)
	}
	got := make([][]Failure, len(pods))
	for ; n > 0; n-- {
		r := <-ch
		got[r.idx] = r.f
	}
	for _, f := range got {
		fails = append(fails, f...)
	}
	return fails
}

type zoneFile struct{ name, view, file, typ string }

var (
	reView = regexp.MustCompile(`^view "((?:[^"\\]|\\.)*)"`)
	reZone = regexp.MustCompile(`^\s*zone "((?:[^"\\]|\\.)*)"`)
	reType = regexp.MustCompile(`^\s*type (\w+);`)
	reFile = regexp.MustCompile(`^\s*file "((?:[^"\\]|\\.)*)";`)
)

// zoneFiles lists the primary zones of a config with their files, from
// named-checkconf -p (includes expanded, one statement a line).
func zoneFiles(t testing.TB, root, conf string) []zoneFile { return zoneList(t, root, conf, false) }

// zoneList is every zone statement of a config (all) or its primary zones
// with files.
func zoneList(t testing.TB, root, conf string, all bool) []zoneFile {
	out, err := exec.Command(bindtools.BINDPath(t, "named-checkconf"), "-p", "-t", root, conf).CombinedOutput()
	if err != nil {
		return nil
	}
	var zs []zoneFile
	var view string
	var cur *zoneFile
	var typ string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		l := sc.Text()
		if m := reView.FindStringSubmatch(l); m != nil {
			view = m[1]
			continue
		}
		if m := reZone.FindStringSubmatch(l); m != nil {
			cur, typ = &zoneFile{name: unquote(m[1]), view: view}, ""
			continue
		}
		if cur == nil {
			continue
		}
		if m := reType.FindStringSubmatch(l); m != nil {
			typ = m[1]
		}
		if m := reFile.FindStringSubmatch(l); m != nil {
			cur.file = unquote(m[1])
		}
		if strings.TrimSpace(l) == "};" {
			typ = vocab.ZoneType(typ)
			cur.typ = typ
			if all || (typ == "primary" && cur.file != "") {
				zs = append(zs, *cur)
			}
			cur = nil
		}
	}
	return zs
}

func unquote(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `\"`, `"`), `\\`, `\`) }

func trimPaths(out, root string) string {
	out = strings.ReplaceAll(out, root, "")
	return strings.TrimSpace(out)
}

// podScript runs inside `unshare -n -m` (a private network and mount
// namespace): loopback up, the pod's tree bound over the mount points — /etc
// behind an overlay and /run behind a tmpfs, so no mount point is created
// in the shared root — then the release's /usr (BINDFN_USR, bindtools:
// named is that release's), then named.
const podScript = `set -e
ip link set lo up
mount -t tmpfs bindfn-diff "$POD_ROOT/.ovl"
mkdir "$POD_ROOT/.ovl/up" "$POD_ROOT/.ovl/wk"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$POD_ROOT/.ovl/up,workdir=$POD_ROOT/.ovl/wk" /etc
mkdir -p /etc/bind-fn /var/lib/bind
mount --bind "$POD_ROOT/etc/bind-fn" /etc/bind-fn
mount -t tmpfs bindfn-run /run
mkdir -p /run/bind-fn
mount --bind "$POD_ROOT/run/bind-fn" /run/bind-fn
mount --bind "$POD_ROOT/var/lib/bind" /var/lib/bind
if [ -n "$BINDFN_USR" ]; then mount --bind -o ro "$BINDFN_USR" /usr; fi
exec "$@"
`

// NamedTimeout bounds one named start.
var NamedTimeout = 120 * time.Second

// settle is how long named runs after "running": key management and
// signing report their failures just after the zones load.
const settle = 700 * time.Millisecond

// fatalLines are named log lines that mean a zone or the config did not
// load (the config, a zone file, a policy, an ACL). Not "has no address
// records": for an MX or SRV target named logs it and loads the zone (for
// an NS target "not loaded due to errors" follows); case
// mx-target-in-zone-without-address.
var fatalLines = regexp.MustCompile(`(?i)(loading configuration: |exiting \(due to fatal error\)|not loaded due to errors|acl loop|loading from master file .* failed|dns_master_load|dns_zone_load|failed while|exceeds configured max-zone-ttl|keymgr: .*(fail|error)|dnssec-policy.*(fail|error|invalid)|zone_rekey.*failed|unable to (sign|create)|rpz .*(fail|error)|catz: (?:.*: )?(?:invalid|error|fail)|bad zone|unknown (option|RR type)|syntax error|out of range|not at top of zone|is a CNAME \(illegal\)|bad name|bad owner|ignoring out-of-zone data|zone serial .* unchanged|could not configure|: not found|is not a valid|already exists|failed: )`)

// benign are log lines that match fatalLines but say nothing about the
// rendered config: the lab has no network, no primary and no root servers.
var benign = regexp.MustCompile(`(?i)(network unreachable|resolver priming|managed-keys-zone|refresh: |transfer of |zone_refresh|retry limit|connection refused|timed out|could not listen|unable to listen|notify|SOA query|failed to connect|no primaries|catz: catz_addmodzone|catz: zone .* not found|automatic empty zone|unable to fetch DNSKEY)`)

// runNamed starts named for one role until it is running and has loaded
// every zone (or exits), and returns what went wrong.
func runNamed(t testing.TB, cluster, root, conf string) []Failure {
	where := roleOf(conf)
	rel := bindtools.Current(t)
	named := rel.Prog(t, "named")
	ctx, cancel := context.WithTimeout(context.Background(), NamedTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-n", "-m", "/bin/sh", "-c", podScript, "pod", named, "-g", "-n", "1", "-c", layout.ConfigFile(conf))
	cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "POD_ROOT=" + root}, rel.Env(t)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return []Failure{{Stage: StageNamed, Cluster: cluster, Where: where, Msg: err.Error()}}
	}
	pw.Close()
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var log []string
	running := false
	var after <-chan time.Time
	exited := false
loop:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				exited = true
				break loop
			}
			log = append(log, l)
			if !running && strings.HasSuffix(l, " running") {
				running = true
				after = time.After(settle)
			}
		case <-after:
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	pr.Close()
	var bad []string
	for _, l := range log {
		if fatalLines.MatchString(l) && !benign.MatchString(l) {
			bad = append(bad, stripTime(l))
		}
	}
	switch {
	case exited && !running:
		bad = append(tail(log, 6), bad...)
		return []Failure{{Stage: StageNamed, Cluster: cluster, Where: where, Msg: "named exited early: " + strings.Join(bad, "\n")}}
	case !running:
		return []Failure{{Stage: StageNamed, Cluster: cluster, Where: where, Msg: fmt.Sprintf("named not running after %s: %s", NamedTimeout, strings.Join(tail(log, 5), "\n"))}}
	case len(bad) > 0:
		return []Failure{{Stage: StageNamed, Cluster: cluster, Where: where, Msg: strings.Join(bad, "\n")}}
	}
	return nil
}

var timePrefix = regexp.MustCompile(`^\d{2}-\w{3}-\d{4} \d{2}:\d{2}:\d{2}\.\d{3} `)

func stripTime(l string) string { return timePrefix.ReplaceAllString(l, "") }

func tail(l []string, n int) []string {
	if len(l) > n {
		l = l[len(l)-n:]
	}
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = stripTime(s)
	}
	return out
}
