//go:build cluster

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
	"git.unkin.net/unkin/bind-fn/test/k8s/fixture"
)

const (
	crossplaneVersion = "v2.1.0"
	// crossplaneTag is the name of Crossplane's published image; the one
	// imported here is crossplane-core built from the module proxy.
	crossplaneTag = "xpkg.crossplane.io/crossplane/crossplane:" + crossplaneVersion
	repo          = registryHost + "/unkin/bind-fn"
	xpNS          = "xp"
	// fnName is the Function's name: the one Crossplane gives the
	// Configuration's dependency, which the Composition references.
	fnName = "unkin-bind-fn-function-bind"
	// xrClusterIP: the example XR pins no serve address; the test gives it
	// one so it can query through the ClusterIP (TestRenderedCluster's
	// serveIP is 10.96.53.53, this is the next one).
	xrClusterIP = "10.96.53.54"
)

// composedKinds: every kind function-bind composes natively.
var composedKinds = []string{"configmaps", "secrets", "services", "statefulsets.apps", "poddisruptionbudgets.policy", "networkpolicies.networking.k8s.io"}

// getJSON is `kubectl get ARGS -o json` as an object.
func getJSON(args ...string) (*unstructured.Unstructured, error) {
	out, err := exec.Command(filepath.Join(bin, "kubectl"), append([]string{"--kubeconfig", cp.Kubeconfig, "get", "-o", "json"}, args...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("kubectl get %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return nil, err
	}
	o := &unstructured.Unstructured{}
	if err := json.Unmarshal(out, &o.Object); err != nil {
		return nil, err
	}
	return o, nil
}

// items is getJSON of a list.
func items(args ...string) ([]unstructured.Unstructured, error) {
	l, err := getJSON(args...)
	if err != nil {
		return nil, err
	}
	ul, err := l.ToList()
	if err != nil {
		return nil, err
	}
	return ul.Items, nil
}

// cond is a condition's status, reason and message ("" when absent).
func cond(o *unstructured.Unstructured, typ string) (status, reason, message string) {
	cs, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

// conds checks that o has every condition True.
func conds(o *unstructured.Unstructured, types ...string) error {
	for _, typ := range types {
		if s, r, m := cond(o, typ); s != "True" {
			return fmt.Errorf("%s %s: %s=%q %s: %s", o.GetKind(), o.GetName(), typ, s, r, m)
		}
	}
	return nil
}

// Pokes: the composites waitFor annotates (kubectl arguments).
var (
	pokeNone []string
	pokeXR   = []string{"-n", xpNS, "xbindclusters.xbind.unkin.net/auth"}
)

// waitFor polls f until it returns nil, bounded by controlplane.Hang.
// With poke, it annotates that composite every 10 s: Crossplane v2.1's
// watch circuit breaker drops watch events while open (see
// docs/crossplane.md), and a dropped event is never delivered again.
func waitFor(t *testing.T, what string, poke []string, f func() error) {
	t.Helper()
	deadline, next, i := time.Now().Add(controlplane.Hang), time.Now().Add(10*time.Second), 0
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		if len(poke) > 0 && time.Now().After(next) {
			i++
			kubectl(t, append(append([]string{"annotate", "--overwrite"}, poke...), fmt.Sprintf("test.bind.unkin.net/wait=%d", i))...)
			next = time.Now().Add(10 * time.Second)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s: not after %s: %v", what, controlplane.Hang, err)
}

// crossplaneImage builds Crossplane's image the way its release lays it out
// (the binary at /usr/local/bin/crossplane, the core CRDs at /crds, which
// `crossplane core init` applies) from bin/crossplane-core, and imports it.
func crossplaneImage(t *testing.T) {
	t.Helper()
	mod, err := controlplane.CrossplaneModule(root, crossplaneVersion)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := filepath.Glob(filepath.Join(mod, "cluster", "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no Crossplane CRDs in %s", mod)
	}
	tar := filepath.Join(dir, "images", "crossplane.tar")
	args := []string{"-bin", filepath.Join(bin, "crossplane-core"), "-path-in-image", "/usr/local/bin/crossplane",
		"-tag", crossplaneTag, "-o", tar}
	for _, c := range crds {
		args = append(args, "-extra-file", c+":/crds/"+filepath.Base(c))
	}
	if err := sh(filepath.Join(bin, "image"), args...); err != nil {
		t.Fatal(err)
	}
	if err := sh("ctr", "-a", sock, "-n", "k8s.io", "images", "import", tar); err != nil {
		t.Fatal(err)
	}
}

// xpkgBuild runs hack/xpkg.sh (what `make xpkg` runs) for version into out.
func xpkgBuild(t *testing.T, out, version string) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(root, "hack", "xpkg.sh"), out, version)
	cmd.Env = append(os.Environ(), "IMAGE_TOOL="+filepath.Join(bin, "image"))
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/xpkg.sh %s %s: %v\n%s", out, version, err, o)
	}
}

// metric sums the samples of a Prometheus counter whose labels contain
// every one of match, from url.
func metric(t *testing.T, url, name string, match ...string) int {
	t.Helper()
	rsp, err := http.Get(url)
	if err != nil {
		t.Fatalf("metrics %s: %v", url, err)
	}
	defer rsp.Body.Close()
	body, _ := io.ReadAll(rsp.Body)
	n := 0
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\{([^}]*)\} (\d+)`)
	for _, m := range re.FindAllSubmatch(body, -1) {
		ok := true
		for _, s := range match {
			ok = ok && strings.Contains(string(m[1]), s)
		}
		if ok {
			v, _ := strconv.Atoi(string(m[2]))
			n += v
		}
	}
	return n
}

// TestPackageManager installs bind-fn as a user does, on the kubelet:
// Crossplane core v2.1.0 runs as pods (its Helm chart's objects); an OCI
// registry on the node's address serves the packages `crossplane xpkg push`
// pushed; Crossplane's package manager installs the Function and the
// Configuration from it, and containerd pulls function-bind's runtime from
// it, trusting the test CA; an XBindCluster's BIND pods (the 9.20 image,
// pulled from the same registry) serve; a new function version is
// installed over the old without touching what it composed; the XR's
// deletion removes what it composed.
func TestPackageManager(t *testing.T) {
	ctx := context.Background()
	coreDNS(t, ctx) // the secondaries find the primary by its cluster DNS name
	t0 := time.Now()
	startRegistry(t)

	// The packages, two versions of the same source (hack/xpkg.sh, which
	// `make xpkg` runs), pushed by the crossplane CLI.
	work := filepath.Join(dir, "xpkg")
	fnRef := func(v string) string { return repo + "/function-bind:" + v }
	digest := map[string]v1.Hash{}
	for _, v := range []string{"v0.1.0", "v0.2.0"} {
		xpkgBuild(t, filepath.Join(work, v), v)
	}
	// v0.2.0 is pushed when it is released (UpgradeWithoutChurn): the
	// Configuration's constraint (>=v0.1.0) would pick it otherwise.
	digest["v0.1.0"] = xpkgPush(t, filepath.Join(work, "v0.1.0", "function-bind.xpkg"), fnRef("v0.1.0"))
	cfgRef := repo + "/configuration-bind:v0.1.0"
	xpkgPush(t, filepath.Join(work, "v0.1.0", "configuration-bind.xpkg"), cfgRef)
	pushedImages(t)
	step("packages and images pushed", t0)

	// Crossplane as its chart installs it, plus bind-fn's CRDs (the
	// required resources' kinds) and the RBAC for the composed kinds.
	crossplaneImage(t)
	kubectl(t, "apply", "--server-side", "-f", filepath.Join(root, "config", "crd"))
	kubectl(t, "apply", "--server-side", "-f", filepath.Join("testdata", "crossplane.yaml"))
	kubectl(t, "-n", "crossplane-system", "create", "configmap", "registry-ca", "--from-file=ca.crt="+reg.caFile)
	kubectl(t, "apply", "--server-side", "-f", filepath.Join(root, "package", "rbac", "aggregate-to-crossplane.yaml"))
	xp := waitPodsReady(t, ctx, "crossplane-system", "app=crossplane", 1, controlplane.Hang)
	waitPodsReady(t, ctx, "crossplane-system", "app=crossplane-rbac-manager", 1, controlplane.Hang)
	xpMetrics := "http://" + xp[0].Status.PodIP + ":8080/metrics"
	t.Logf("set-up: registry, 2 function packages, the configuration and 2 images pushed, Crossplane core and its rbac manager Ready, in %.1f s", time.Since(t0).Seconds())

	fnPods := func(digest v1.Hash) ([]corev1.Pod, error) {
		l, err := cs.CoreV1().Pods("crossplane-system").List(ctx, metav1.ListOptions{LabelSelector: "pkg.crossplane.io/function=" + fnName})
		if err != nil {
			return nil, err
		}
		var out []corev1.Pod
		for _, p := range l.Items {
			for _, c := range p.Status.ContainerStatuses {
				if c.Ready && strings.HasSuffix(c.ImageID, "@"+digest.String()) {
					out = append(out, p)
				}
			}
		}
		return out, nil
	}
	activeRevision := func(pkg string) (*unstructured.Unstructured, error) {
		revs, err := items("functionrevisions.pkg.crossplane.io", "-l", "pkg.crossplane.io/package="+fnName)
		if err != nil {
			return nil, err
		}
		var active []string
		for i := range revs {
			r := &revs[i]
			state, _, _ := unstructured.NestedString(r.Object, "spec", "desiredState")
			p, _, _ := unstructured.NestedString(r.Object, "spec", "image")
			if state == "Active" {
				active = append(active, r.GetName())
				if p == pkg {
					return r, conds(r, "RevisionHealthy", "RuntimeHealthy")
				}
			}
		}
		return nil, fmt.Errorf("no active revision of %s among %d (active: %v)", pkg, len(revs), active)
	}

	t.Run("FunctionInstalled", func(t *testing.T) {
		t0 := time.Now()
		apply(t, ctx, fixture.Load(t, "function.yaml", map[string]string{"NAME": fnName, "PACKAGE": fnRef("v0.1.0")}))
		var rev *unstructured.Unstructured
		waitFor(t, "Function "+fnName+" Installed and Healthy, its revision Healthy", pokeNone, func() error {
			f, err := getJSON("functions.pkg.crossplane.io", fnName)
			if err != nil {
				return err
			}
			if err := conds(f, "Installed", "Healthy"); err != nil {
				return err
			}
			rev, err = activeRevision(fnRef("v0.1.0"))
			return err
		})
		endpoint, _, _ := unstructured.NestedString(rev.Object, "status", "endpoint")
		t.Logf("Function Installed and Healthy, revision %s Healthy (endpoint %s) in %.1f s", rev.GetName(), endpoint, time.Since(t0).Seconds())
		var pods []corev1.Pod
		waitFor(t, "function-bind's runtime pod Ready, running the pushed package", pokeNone, func() error {
			var err error
			if pods, err = fnPods(digest["v0.1.0"]); err == nil && len(pods) == 0 {
				err = fmt.Errorf("no Ready pod runs %s", digest["v0.1.0"])
			}
			return err
		})
		p := pods[0]
		t.Logf("runtime pod %s on %s runs %s (%s)", p.Name, p.Spec.NodeName, p.Status.ContainerStatuses[0].Image, p.Status.ContainerStatuses[0].ImageID)
		// The TLS Secrets Crossplane made: the function serves with the
		// server certificate its revision names, signed by crossplane-root-ca.
		tlsName, _, _ := unstructured.NestedString(rev.Object, "spec", "tlsServerSecretName")
		for _, n := range []string{tlsName, "crossplane-root-ca", "crossplane-tls-client"} {
			s, err := cs.CoreV1().Secrets("crossplane-system").Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Secret %q: %v", n, err)
			}
			var keys []string
			for k := range s.Data {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if len(keys) == 0 {
				t.Errorf("Secret %s is empty", n)
			}
			t.Logf("Secret %s: %v", n, keys)
		}
		mounted := false
		for _, v := range p.Spec.Volumes {
			mounted = mounted || (v.Secret != nil && v.Secret.SecretName == tlsName)
		}
		if tlsName == "" || !mounted {
			t.Errorf("the runtime pod does not mount the revision's TLS server Secret %q", tlsName)
		}
	})

	t.Run("ConfigurationInstalled", func(t *testing.T) {
		t0 := time.Now()
		apply(t, ctx, fixture.Load(t, "configuration.yaml", map[string]string{"PACKAGE": cfgRef}))
		waitFor(t, "Configuration configuration-bind Installed and Healthy, the XRD established", pokeNone, func() error {
			c, err := getJSON("configurations.pkg.crossplane.io", "configuration-bind")
			if err != nil {
				return err
			}
			if err := conds(c, "Installed", "Healthy"); err != nil {
				return err
			}
			x, err := getJSON("compositeresourcedefinitions.apiextensions.crossplane.io", "xbindclusters.xbind.unkin.net")
			if err != nil {
				return err
			}
			if err := conds(x, "Established"); err != nil {
				return err
			}
			_, err = getJSON("compositions.apiextensions.crossplane.io", "xbindclusters.xbind.unkin.net")
			return err
		})
		// The dependency is the Function installed above, not a second one.
		fns, err := items("functions.pkg.crossplane.io")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range fns {
			names = append(names, f.GetName())
		}
		if !cmp.Equal(names, []string{fnName}) {
			t.Errorf("Functions after the Configuration: %v, want only %s", names, fnName)
		}
		t.Logf("Configuration Installed and Healthy (its dependency: the Function above), XRD Established, in %.1f s", time.Since(t0).Seconds())
	})

	// The example XR in namespace xp, with its required DNSRecords, and one
	// PersistentVolume per replica (no provisioner here).
	xrYAML := func(t *testing.T) string {
		b, err := os.ReadFile(filepath.Join(root, "examples", "crossplane", "xr.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "  namespace: dns\n", "  namespace: "+xpNS+"\n", 1)
		return strings.Replace(s, "  service:\n    type: LoadBalancer\n", "  service:\n    type: LoadBalancer\n    clusterIP: "+xrClusterIP+"\n", 1)
	}
	pods := func(t *testing.T) []corev1.Pod {
		l, err := cs.CoreV1().Pods(xpNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=auth"})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	// answers waits until every pod answers name/type with want.
	answers := func(t *testing.T, name, typ, want string) {
		t.Helper()
		for _, p := range pods(t) {
			waitFor(t, fmt.Sprintf("%s (%s) answers %s %s with %q", p.Name, p.Status.PodIP, name, typ, want), pokeNone, func() error {
				got, _ := dig("@"+p.Status.PodIP, name, typ)
				lines := strings.Split(got, "\n")
				sort.Strings(lines)
				if got = strings.Join(lines, "\n"); got != want {
					return fmt.Errorf("got %q", got)
				}
				return nil
			})
		}
	}
	// composed: resourceVersion of everything the XR composed, and the
	// pods' UIDs and restart counts.
	composed := func(t *testing.T) map[string]string {
		out := map[string]string{}
		for _, k := range composedKinds {
			l, err := items("-n", xpNS, k, "-l", "crossplane.io/composite=auth")
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range l {
				out[o.GetKind()+"/"+o.GetName()] = o.GetResourceVersion()
			}
		}
		for _, p := range pods(t) {
			r := 0
			for _, c := range p.Status.ContainerStatuses {
				r += int(c.RestartCount)
			}
			out["Pod/"+p.Name] = fmt.Sprintf("%s restarts=%d", p.UID, r)
		}
		return out
	}

	t.Run("XRServes", func(t *testing.T) {
		t0 := time.Now()
		apply(t, ctx, namespaces(t, xpNS, "other")+hostPathPVs(t, "pv-xp-", 3))
		req, err := os.ReadFile(filepath.Join(root, "examples", "crossplane", "required.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		apply(t, ctx, strings.ReplaceAll(string(req), "  namespace: dns\n", "  namespace: "+xpNS+"\n"))
		events := watchComposed(t, ctx, xpNS, "auth")
		breaker0 := metric(t, xpMetrics, "circuit_breaker_events_total")
		apply(t, ctx, xrYAML(t))
		ps := waitPodsReady(t, ctx, xpNS, "app.kubernetes.io/instance=auth", 3, controlplane.Hang)
		t.Logf("3 BIND pods composed by the installed function Ready in %.1f s", time.Since(t0).Seconds())
		for _, p := range ps {
			for _, c := range p.Status.ContainerStatuses {
				t.Logf("%s/%s: %s %s", p.Name, c.Name, c.Image, c.ImageID)
			}
		}
		waitFor(t, "XR Synced and Ready", pokeXR, func() error {
			xr, err := getJSON("-n", xpNS, "xbindclusters.xbind.unkin.net", "auth")
			if err != nil {
				return err
			}
			return conds(xr, "Synced", "Ready")
		})
		t.Logf("XR Synced and Ready in %.1f s", time.Since(t0).Seconds())
		// Crossplane v2.1's watch circuit breaker: the events the API server
		// sent for the composed objects (each once) against what the XR's
		// breaker counted, and whether it opened (its burst is 50).
		n, byObject := events.report()
		counted := metric(t, xpMetrics, "circuit_breaker_events_total") - breaker0
		st, reason, msg := cond(mustXR(t), "Responsive")
		t.Logf("first composition: the API server sent %d events for the composed objects; the XR's circuit breaker counted %d (allowed %d, dropped %d); Responsive=%s %s %s; by object, type and writer:\n%s",
			n, counted, metric(t, xpMetrics, "circuit_breaker_events_total", `result="Allowed"`), metric(t, xpMetrics, "circuit_breaker_events_total", `result="Dropped"`), st, reason, msg, byObject)
		if n > 50 {
			t.Errorf("the composed objects alone sent %d watch events, over the breaker's burst of 50", n)
		}
		var got string
		waitFor(t, "www.example.com through the serve Service", pokeNone, func() error {
			if got, err = dig("@"+xrClusterIP, "www.example.com", "A"); err != nil || !strings.Contains(got, "198.51.100.10") {
				return fmt.Errorf("dig @%s www.example.com: %v %q", xrClusterIP, err, got)
			}
			return nil
		})
		t.Logf("www.example.com through the XR's serve Service %s: %q", xrClusterIP, got)
		answers(t, "shop.apps.example.com", "A", "198.51.100.120\n198.51.100.121")
		answers(t, "elsewhere.apps.example.com", "A", "")
	})

	t.Run("ChangesReachEveryPod", func(t *testing.T) {
		t0 := time.Now()
		// A zone change in the XR (blog's address) and a required
		// DNSRecord's (shop's).
		kubectl(t, "-n", xpNS, "patch", "xbindclusters.xbind.unkin.net", "auth", "--type=json",
			"-p", `[{"op":"replace","path":"/spec/records/0/spec/values","value":["198.51.100.31"]}]`)
		kubectl(t, "-n", xpNS, "patch", "dnsrecords.bind.unkin.net", "shop", "--type=merge",
			"-p", `{"spec":{"values":["198.51.100.122"]}}`)
		answers(t, "blog.example.com", "A", "198.51.100.31")
		answers(t, "shop.apps.example.com", "A", "198.51.100.122")
		t.Logf("an XR zone change and a DNSRecord change reached every pod in %.1f s", time.Since(t0).Seconds())
	})

	t.Run("UpgradeWithoutChurn", func(t *testing.T) {
		t0 := time.Now()
		digest["v0.2.0"] = xpkgPush(t, filepath.Join(work, "v0.2.0", "function-bind.xpkg"), fnRef("v0.2.0"))
		before := composed(t)
		kubectl(t, "patch", "functions.pkg.crossplane.io", fnName, "--type=merge",
			"-p", `{"spec":{"package":"`+fnRef("v0.2.0")+`"}}`)
		waitFor(t, "v0.2.0's revision Active and Healthy, its runtime pod Ready", pokeNone, func() error {
			if _, err := activeRevision(fnRef("v0.2.0")); err != nil {
				return err
			}
			f, err := getJSON("functions.pkg.crossplane.io", fnName)
			if err != nil {
				return err
			}
			if err := conds(f, "Installed", "Healthy"); err != nil {
				return err
			}
			ps, err := fnPods(digest["v0.2.0"])
			if err == nil && len(ps) == 0 {
				err = fmt.Errorf("no Ready pod runs %s", digest["v0.2.0"])
			}
			return err
		})
		revs, err := items("functionrevisions.pkg.crossplane.io", "-l", "pkg.crossplane.io/package="+fnName)
		if err != nil {
			t.Fatal(err)
		}
		var states []string
		for _, r := range revs {
			s, _, _ := unstructured.NestedString(r.Object, "spec", "desiredState")
			img, _, _ := unstructured.NestedString(r.Object, "spec", "image")
			states = append(states, img[strings.LastIndex(img, ":")+1:]+"="+s)
		}
		sort.Strings(states)
		if want := []string{"v0.1.0=Inactive", "v0.2.0=Active"}; !cmp.Equal(states, want) {
			t.Errorf("revisions %v, want %v", states, want)
		}
		if fns, err := items("functions.pkg.crossplane.io"); err != nil || len(fns) != 1 {
			t.Errorf("Functions after the upgrade: %d (%v), want 1", len(fns), err)
		}
		t.Logf("revisions switched (%v) in %.1f s", states, time.Since(t0).Seconds())
		// The new version composes the XR: once v0.1.0's runtime is gone
		// (Crossplane deletes an inactive revision's Deployment), every
		// successful call reaches v0.2.0's pod, the only one the package's
		// Service resolves to. Crossplane's own count of successful calls
		// (its metric keeps the package label of the gRPC connection's
		// creation, v0.1.0: the endpoint did not change).
		waitFor(t, "v0.1.0's runtime pod gone", pokeNone, func() error {
			l, err := cs.CoreV1().Pods("crossplane-system").List(ctx, metav1.ListOptions{LabelSelector: "pkg.crossplane.io/function=" + fnName})
			if err != nil {
				return err
			}
			for _, p := range l.Items {
				for _, c := range p.Status.ContainerStatuses {
					if !strings.HasSuffix(c.ImageID, "@"+digest["v0.2.0"].String()) {
						return fmt.Errorf("pod %s runs %s", p.Name, c.ImageID)
					}
				}
			}
			return nil
		})
		calls := func() int {
			return metric(t, xpMetrics, "function_run_function_response_total", `function_name="`+fnName+`"`, `grpc_code="OK"`)
		}
		n0 := calls()
		waitFor(t, "Crossplane calls function-bind v0.2.0 for the XR", pokeXR, func() error {
			if n := calls(); n <= n0 {
				return fmt.Errorf("%d successful calls", n)
			}
			return nil
		})
		n1 := calls()
		waitFor(t, "a second call to v0.2.0", pokeXR, func() error {
			if n := calls(); n <= n1 {
				return fmt.Errorf("%d successful calls", n)
			}
			return nil
		})
		if err := conds(mustXR(t), "Synced"); err != nil {
			t.Error(err)
		}
		after := composed(t)
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("the upgrade changed composed objects or pods (-before +after):\n%s", diff)
		}
		t.Logf("%d successful calls since v0.2.0's pod serves alone; %d composed objects and pods unchanged (resourceVersions, pod UIDs, restarts), in %.1f s", calls()-n0, len(after), time.Since(t0).Seconds())
		answers(t, "blog.example.com", "A", "198.51.100.31")
	})

	t.Run("CircuitBreaker", func(t *testing.T) {
		// What the XR's watch circuit breaker saw, by result, and whether it
		// opened (Crossplane's own counters).
		rsp, err := http.Get(xpMetrics)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rsp.Body)
		rsp.Body.Close()
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, "circuit_breaker_") {
				t.Log(l)
			}
		}
		xr := mustXR(t)
		s, r, m := cond(xr, "Responsive")
		t.Logf("XR Responsive=%s %s %s", s, r, m)
	})

	t.Run("DeleteXR", func(t *testing.T) {
		t0 := time.Now()
		kubectl(t, "-n", xpNS, "delete", "xbindclusters.xbind.unkin.net", "auth", "--wait=false")
		waitFor(t, "the XR and everything it composed gone", pokeNone, func() error {
			if _, err := getJSON("-n", xpNS, "xbindclusters.xbind.unkin.net", "auth"); err == nil {
				return fmt.Errorf("XR still there")
			}
			left := composed(t)
			if len(left) > 0 {
				keys := make([]string, 0, len(left))
				for k := range left {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				return fmt.Errorf("left: %v", keys)
			}
			return nil
		})
		pvcs, err := cs.CoreV1().PersistentVolumeClaims(xpNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range pvcs.Items {
			names = append(names, c.Name+"="+string(c.Status.Phase))
		}
		sort.Strings(names)
		// The StatefulSet's volume claims follow Kubernetes' default
		// retention (persistentVolumeClaimRetentionPolicy Retain): the zone
		// data outlives the XR (docs/crossplane.md).
		if len(names) != 3 {
			t.Errorf("data volume claims after the XR's deletion: %v, want the 3 kept (Retain)", names)
		}
		t.Logf("XR deleted: every composed object and pod gone in %.1f s; data claims kept: %v", time.Since(t0).Seconds(), names)
	})

	t.Run("Claim", func(t *testing.T) {
		// The legacy XRD (claim BindClusterClaim) with the native claim
		// Composition, applied as files: the claim package's own
		// Composition wraps objects for provider-kubernetes, which is not
		// here. Composed through the same installed Function.
		t0 := time.Now()
		const ns = "team-dns"
		claimDir := filepath.Join(root, "examples", "crossplane", "claim")
		kubectl(t, "apply", "--server-side", "-f", filepath.Join(root, "package", "configuration-claim", "xrd.yaml"),
			"-f", filepath.Join(claimDir, "composition.yaml"))
		waitFor(t, "the legacy XRD Established and Offered", pokeNone, func() error {
			x, err := getJSON("compositeresourcedefinitions.apiextensions.crossplane.io", "xlegacybindclusters.xbind.unkin.net")
			if err != nil {
				return err
			}
			return conds(x, "Established", "Offered")
		})
		apply(t, ctx, namespaces(t, ns, "other-team")+hostPathPVs(t, "pv-team-", 2))
		kubectl(t, "apply", "--server-side", "-f", filepath.Join(claimDir, "required.yaml"), "-f", filepath.Join(claimDir, "claim.yaml"))
		ps := waitPodsReady(t, ctx, ns, "app.kubernetes.io/instance=auth", 2, controlplane.Hang)
		t.Logf("the claim's 2 BIND pods Ready in %.1f s", time.Since(t0).Seconds())
		var composite string
		waitFor(t, "claim Synced and Ready, its connection Secret written", []string{"-n", ns, "bindclusterclaims.xbind.unkin.net/auth"}, func() error {
			c, err := getJSON("-n", ns, "bindclusterclaims.xbind.unkin.net", "auth")
			if err != nil {
				return err
			}
			if err := conds(c, "Synced", "Ready"); err != nil {
				return err
			}
			composite, _, _ = unstructured.NestedString(c.Object, "spec", "resourceRef", "name")
			_, err = cs.CoreV1().Secrets(ns).Get(ctx, "auth-dns", metav1.GetOptions{})
			return err
		})
		for _, p := range ps {
			for name, want := range map[string]string{"www.shop.example.com": "192.0.2.80", "status.shop.example.com": "192.0.2.90"} {
				waitFor(t, fmt.Sprintf("%s (%s) answers %s", p.Name, p.Status.PodIP, name), pokeNone, func() error {
					if got, _ := dig("@"+p.Status.PodIP, name, "A"); got != want {
						return fmt.Errorf("got %q, want %q", got, want)
					}
					return nil
				})
			}
		}
		t.Logf("claim Synced and Ready (composite %s), connection Secret auth-dns, every pod serves the zone and the required DNSRecord, in %.1f s", composite, time.Since(t0).Seconds())
		kubectl(t, "-n", ns, "delete", "bindclusterclaims.xbind.unkin.net", "auth", "--wait=false")
		waitFor(t, "the claim's composite and every composed object gone", pokeNone, func() error {
			if _, err := getJSON("xlegacybindclusters.xbind.unkin.net", composite); err == nil {
				return fmt.Errorf("composite %s still there", composite)
			}
			var left []string
			for _, k := range composedKinds {
				l, err := items("-n", ns, k, "-l", "crossplane.io/composite="+composite)
				if err != nil {
					return err
				}
				for _, o := range l {
					left = append(left, o.GetKind()+"/"+o.GetName())
				}
			}
			if len(left) > 0 {
				return fmt.Errorf("left: %v", left)
			}
			return nil
		})
		t.Logf("claim deleted: its composite and composed objects gone (%.1f s in all)", time.Since(t0).Seconds())
	})
}

func mustXR(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	xr, err := getJSON("-n", xpNS, "xbindclusters.xbind.unkin.net", "auth")
	if err != nil {
		t.Fatal(err)
	}
	return xr
}
