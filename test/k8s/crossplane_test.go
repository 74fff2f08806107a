package k8s

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
	"git.unkin.net/unkin/bind-fn/test/k8s/fixture"
)

const (
	crossplaneVersion = "v2.1.0"
	fnAddress         = "127.0.0.1:9443"
	fnMetrics         = "http://127.0.0.1:8080/metrics"
)

var (
	gvkXR    = schema.GroupVersionKind{Group: "xbind.unkin.net", Version: "v1alpha1", Kind: "XBindCluster"}
	gvkClaim = schema.GroupVersionKind{Group: "xbind.unkin.net", Version: "v1alpha1", Kind: "BindClusterClaim"}
	gvkXRD   = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "CompositeResourceDefinition"}
	gvkSTS   = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	// composedKinds: every kind function-bind composes natively.
	composedKinds = []schema.GroupVersionKind{
		gvkConfigMap, gvkSecret, gvkSTS,
		{Version: "v1", Kind: "Service"},
		{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
		// The agent's ServiceAccount and its Role on the cluster's ConfigMaps.
		{Version: "v1", Kind: "ServiceAccount"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	}
)

// crossplaneCRDs is cluster/crds of the Crossplane module the core is built
// from (tools/crossplane-core), from the Go module cache.
func crossplaneCRDs(t *testing.T) []string {
	t.Helper()
	dir, err := controlplane.CrossplaneModule(env.root, crossplaneVersion)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "cluster", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Crossplane CRDs in %s", dir)
	}
	return files
}

// startCrossplane installs Crossplane's CRDs, starts function-bind (mTLS)
// and Crossplane core outside the cluster, and registers the function with
// a paused, Active FunctionRevision whose status points at function-bind.
func startCrossplane(t *testing.T, ctx context.Context) {
	t.Helper()
	t0 := time.Now()
	installCRDs(t, ctx, crossplaneCRDs(t)...)
	installCRDs(t, ctx, crdFiles(t)...)
	namespace(t, ctx, "crossplane-system")
	dir := filepath.Join(env.dir, "crossplane")
	ca, err := controlplane.NewCA("function-ca")
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Issue("function-bind", nil, []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Issue("crossplane", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	fnTLS, xpTLS := filepath.Join(dir, "function-tls"), filepath.Join(dir, "crossplane-tls")
	if err := ca.WriteTLSDir(fnTLS, server); err != nil {
		t.Fatal(err)
	}
	if err := ca.WriteTLSDir(xpTLS, client); err != nil {
		t.Fatal(err)
	}
	fn, err := controlplane.StartProcess(dir, "function-bind", filepath.Join(env.bin, "function-bind"),
		"--address="+fnAddress, "--tls-server-certs-dir="+fnTLS, "--debug")
	if err != nil {
		t.Fatal(err)
	}
	env.cp.Add(fn)
	eventually(t, controlplane.Hang, "function-bind listening", func() error {
		c, err := net.Dial("tcp", fnAddress)
		if err == nil {
			c.Close()
		}
		return err
	})

	rev := obj(t, fixture.Load(t, "function-revision.yaml", nil))
	mustApply(t, ctx, rev)
	status := obj(t, fixture.Load(t, "function-revision-status.yaml", map[string]string{"ENDPOINT": fnAddress}))
	r, err := resource(status)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ApplyStatus(ctx, status.GetName(), status, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
		t.Fatalf("FunctionRevision status: %v", err)
	}

	core, err := controlplane.StartProcessEnv(dir, "crossplane-core",
		[]string{"KUBECONFIG=" + env.cp.Kubeconfig, "POD_NAMESPACE=crossplane-system"},
		filepath.Join(env.bin, "crossplane-core"), "core", "start",
		"--enable-webhooks=false", "--metrics-port=18080", "--health-probe-port=18081",
		"--xpkg-cache-dir="+filepath.Join(dir, "xpkg"), "--tls-client-certs-dir="+xpTLS,
		"--debug")
	if err != nil {
		t.Fatal(err)
	}
	env.cp.Add(core)
	eventually(t, controlplane.Hang, "crossplane core healthy", func() error {
		if core.Exited() {
			t.Fatalf("crossplane core exited: %s", core.Tail(30))
		}
		rsp, err := http.Get("http://127.0.0.1:18081/healthz")
		if err != nil {
			return err
		}
		rsp.Body.Close()
		if rsp.StatusCode != http.StatusOK {
			return fmt.Errorf("healthz: %s", rsp.Status)
		}
		return nil
	})
	t.Logf("Crossplane core + function-bind started in %.1f s (logs in %s)", time.Since(t0).Seconds(), dir)
}

// fnCalls is function-bind's count of handled RunFunction calls.
func fnCalls(t *testing.T) int {
	t.Helper()
	rsp, err := http.Get(fnMetrics)
	if err != nil {
		t.Fatalf("function-bind metrics: %v", err)
	}
	defer rsp.Body.Close()
	body, _ := io.ReadAll(rsp.Body)
	n := 0
	re := regexp.MustCompile(`(?m)^grpc_server_handled_total\{[^}]*grpc_method="RunFunction"[^}]*\} (\d+)`)
	for _, m := range re.FindAllSubmatch(body, -1) {
		v, _ := strconv.Atoi(string(m[1]))
		n += v
	}
	return n
}

// composed lists the objects in ns labelled as composed by the composite.
func composed(t *testing.T, ctx context.Context, ns, composite string) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, gvk := range composedKinds {
		items, err := list(ctx, gvk, ns, "crossplane.io/composite="+composite)
		if err != nil {
			t.Fatalf("list %s: %v", gvk.Kind, err)
		}
		for i := range items {
			out[items[i].GetKind()+"/"+items[i].GetName()] = &items[i]
		}
	}
	return out
}

func keys[M ~map[string]V, V any](m M) []string {
	out := slices.Sorted(maps.Keys(m))
	return out
}

// renderGolden is what `crossplane render` of the example composes
// (test/testdata/crossplane/render.yaml, checked by test/crossplane_test.go).
func renderGolden(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, o := range readObjects(t, filepath.Join(env.root, "test", "testdata", "crossplane", "render.yaml")) {
		if o.GetKind() != "XBindCluster" {
			out = append(out, o.GetKind()+"/"+o.GetName())
		}
	}
	sort.Strings(out)
	return out
}

// inNamespace moves example objects of namespace from to namespace to.
func inNamespace(objs []*unstructured.Unstructured, from, to string) []*unstructured.Unstructured {
	for _, o := range objs {
		if o.GetNamespace() == from {
			o.SetNamespace(to)
		}
	}
	return objs
}

// TestCrossplane runs the configuration packages on Crossplane core v2.1.0
// with function-bind: the XRDs become CRDs, the example XR and the claim
// compose every object, changes flow, nothing churns, a bad XR says why.
func TestCrossplane(t *testing.T) {
	ctx := context.Background()
	startCrossplane(t, ctx)

	t.Run("XRDsBecomeCRDs", func(t *testing.T) {
		t0 := time.Now()
		// Both packages' XRDs and Compositions, and the claim example's
		// native Composition (the claim package's wraps objects for
		// provider-kubernetes, which Crossplane v1.x needs). The legacy XRD
		// is apiextensions.crossplane.io/v1 on purpose (v1.x knows no v2):
		// its deprecation warning is the one expected.
		files := []string{
			"package/configuration/xrd.yaml", "package/configuration/composition.yaml",
			"package/configuration-claim/xrd.yaml", "package/configuration-claim/composition.yaml",
			"examples/crossplane/claim/composition.yaml",
		}
		for _, f := range files {
			for _, o := range readObjects(t, filepath.Join(env.root, f)) {
				_, warn, err := apply(ctx, o, false)
				if err != nil {
					t.Fatalf("%s: apply %s: %v", f, id(o), err)
				}
				for _, w := range warn {
					if !strings.Contains(w, "CompositeResourceDefinition v1 is deprecated") || o.GetName() != "xlegacybindclusters.xbind.unkin.net" {
						t.Errorf("%s: apply %s: warning %q", f, id(o), w)
					}
				}
			}
		}
		for _, name := range []string{"xbindclusters.xbind.unkin.net", "xlegacybindclusters.xbind.unkin.net"} {
			eventually(t, controlplane.Hang, "XRD "+name+" Established", func() error {
				x, err := get(ctx, gvkXRD, "", name)
				if err != nil {
					return err
				}
				return condition(x, "Established", "True")
			})
		}
		eventually(t, controlplane.Hang, "claim offered", func() error {
			x, err := get(ctx, gvkXRD, "", "xlegacybindclusters.xbind.unkin.net")
			if err != nil {
				return err
			}
			return condition(x, "Offered", "True")
		})
		for _, crd := range []string{"xbindclusters.xbind.unkin.net", "xlegacybindclusters.xbind.unkin.net", "bindclusterclaims.xbind.unkin.net"} {
			c, err := get(ctx, gvkCRD, "", crd)
			if err != nil {
				t.Fatalf("derived CRD %s: %v", crd, err)
			}
			if err := condition(c, "Established", "True"); err != nil {
				t.Error(err)
			}
		}
		env.mapper.Reset()
		t.Logf("both XRDs established, 3 CRDs derived, in %.1f s", time.Since(t0).Seconds())
	})

	const ns = "xp"
	namespace(t, ctx, ns, "other")
	xrFile := filepath.Join(env.root, "examples", "crossplane", "xr.yaml")

	t.Run("XRComposesEveryObject", func(t *testing.T) {
		t0 := time.Now()
		mustApply(t, ctx, inNamespace(readObjects(t, filepath.Join(env.root, "examples", "crossplane", "required.yaml")), "dns", ns)...)
		mustApply(t, ctx, inNamespace(readObjects(t, xrFile), "dns", ns)...)
		want := renderGolden(t)
		eventually(t, controlplane.Hang, "XR synced with every object composed", func() error {
			xr, err := get(ctx, gvkXR, ns, "auth")
			if err != nil {
				return err
			}
			if err := condition(xr, "Synced", "True"); err != nil {
				return err
			}
			if got := keys(composed(t, ctx, ns, "auth")); !cmp.Equal(got, want) {
				return fmt.Errorf("composed %v, want %v", got, want)
			}
			return nil
		})
		xr, _ := get(ctx, gvkXR, ns, "auth")
		refs, _, _ := unstructured.NestedSlice(xr.Object, "spec", "crossplane", "resourceRefs")
		if len(refs) != len(want) {
			t.Errorf("spec.crossplane.resourceRefs has %d entries, want %d", len(refs), len(want))
		}
		bind, _, _ := unstructured.NestedMap(xr.Object, "status", "bind")
		wantBind := map[string]any{
			"namespace": ns, "serveService": "auth", "serveAddress": "auth." + ns + ".svc",
			"primaryService": "auth-primary", "headlessService": "auth-headless", "configMap": "auth-config",
			"composedObjects": int64(len(want)),
		}
		for k, v := range wantBind {
			if !cmp.Equal(bind[k], v) {
				t.Errorf("status.bind.%s = %v, want %v", k, bind[k], v)
			}
		}
		// The required DNSRecords (same namespace) reach the dynamic zone;
		// the one of another namespace does not.
		cms := composed(t, ctx, ns, "auth")
		var zones strings.Builder
		for k, o := range cms {
			if strings.HasPrefix(k, "ConfigMap/") {
				data, _, _ := unstructured.NestedStringMap(o.Object, "data")
				for _, v := range data {
					zones.WriteString(v)
				}
			}
		}
		for _, s := range []string{"198.51.100.120", "shop.apps.example.com.", "198.51.100.30"} {
			if !strings.Contains(zones.String(), s) {
				t.Errorf("the composed ConfigMaps lack %q (required DNSRecords / inline records)", s)
			}
		}
		if strings.Contains(zones.String(), "198.51.100.99") {
			t.Error("a DNSRecord of another namespace reached the zone")
		}
		t.Logf("%d objects composed in %.1f s", len(want), time.Since(t0).Seconds())
	})

	t.Run("Readiness", func(t *testing.T) {
		xr, err := get(ctx, gvkXR, ns, "auth")
		if err != nil {
			t.Fatal(err)
		}
		if err := condition(xr, "Ready", "False"); err != nil {
			t.Errorf("no StatefulSet pod is ready (no kube-controller-manager here), want Ready=False: %v", err)
		}
		stsReady(t, ctx, ns, "auth", 3)
		t0 := time.Now()
		eventuallyPoking(t, ctx, gvkXR, ns, "auth", controlplane.Hang, "XR Ready once the StatefulSet is", func() error {
			xr, err := get(ctx, gvkXR, ns, "auth")
			if err != nil {
				return err
			}
			if err := condition(xr, "Ready", "True"); err != nil {
				return err
			}
			c, _, _ := unstructured.NestedInt64(xr.Object, "status", "bind", "composedObjects")
			r, _, _ := unstructured.NestedInt64(xr.Object, "status", "bind", "readyObjects")
			if c == 0 || r != c {
				return fmt.Errorf("status.bind readyObjects %d of %d", r, c)
			}
			return nil
		})
		t.Logf("XR Ready %.1f s after the StatefulSet", time.Since(t0).Seconds())
	})

	t.Run("ChangeReachesConfigMap", func(t *testing.T) {
		t0 := time.Now()
		patch := []byte(`[{"op":"replace","path":"/spec/records/0/spec/values","value":["198.51.100.31"]}]`)
		r, err := resource(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "xbind.unkin.net/v1alpha1", "kind": "XBindCluster", "metadata": map[string]any{"namespace": ns}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Patch(ctx, "auth", types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
			t.Fatal(err)
		}
		eventuallyPoking(t, ctx, gvkXR, ns, "auth", controlplane.Hang, "the changed record in a composed zone ConfigMap", func() error {
			for k, o := range composed(t, ctx, ns, "auth") {
				if !strings.HasPrefix(k, "ConfigMap/") {
					continue
				}
				data, _, _ := unstructured.NestedStringMap(o.Object, "data")
				for _, v := range data {
					if strings.Contains(v, "198.51.100.31") && !strings.Contains(v, "198.51.100.30") {
						return nil
					}
				}
			}
			return fmt.Errorf("no ConfigMap has blog A 198.51.100.31 (without .30) yet")
		})
		t.Logf("change composed in %.1f s", time.Since(t0).Seconds())
	})

	t.Run("NoChurn", func(t *testing.T) {
		// Crossplane v2 reconciles on watch events (realtime compositions),
		// not by polling: poke the XR with an annotation and wait until
		// function-bind has run again, a few times; no composed object and
		// not the XR's spec may change.
		snapshot := func() map[string]string {
			out := map[string]string{}
			for k, o := range composed(t, ctx, ns, "auth") {
				out[k] = o.GetResourceVersion()
			}
			xr, err := get(ctx, gvkXR, ns, "auth")
			if err != nil {
				t.Fatal(err)
			}
			out["XBindCluster/auth generation"] = strconv.FormatInt(xr.GetGeneration(), 10)
			return out
		}
		before := snapshot()
		t0, calls0 := time.Now(), fnCalls(t)
		const reconciles = 2
		for i := 1; i <= reconciles; i++ {
			calls := fnCalls(t)
			eventuallyPoking(t, ctx, gvkXR, ns, "auth", controlplane.Hang, "function-bind called again", func() error {
				if n := fnCalls(t); n <= calls {
					return fmt.Errorf("%d calls", n)
				}
				return nil
			})
		}
		time.Sleep(time.Second)
		after := snapshot()
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("%d reconciles changed composed objects (-before +after resourceVersion):\n%s", fnCalls(t)-calls0, diff)
		}
		xr, _ := get(ctx, gvkXR, ns, "auth")
		st, reason, msg := conditionMessage(xr, "Responsive")
		t.Logf("%d function calls in %.1f s, no composed object changed; Responsive=%s %s %s", fnCalls(t)-calls0, time.Since(t0).Seconds(), st, reason, msg)
	})

	t.Run("BadXRComposesNothing", func(t *testing.T) {
		bad := obj(t, fixture.Load(t, "bad-xr.yaml", map[string]string{"NAMESPACE": ns}))
		mustApply(t, ctx, bad)
		want := "spec.zones[0].spec.records[1]"
		eventually(t, controlplane.Hang, "a Synced=False condition naming the field", func() error {
			xr, err := get(ctx, gvkXR, ns, "broken")
			if err != nil {
				return err
			}
			st, reason, msg := conditionMessage(xr, "Synced")
			if st != "False" || !strings.Contains(msg, want) {
				return fmt.Errorf("Synced=%s %s: %q, want False naming %s", st, reason, msg, want)
			}
			t.Logf("Synced=False %s: %s", reason, msg)
			return nil
		})
		if got := composed(t, ctx, ns, "broken"); len(got) > 0 {
			t.Errorf("a bad XR composed %v", keys(got))
		}
	})

	t.Run("Claim", func(t *testing.T) {
		t0 := time.Now()
		claimDir := filepath.Join(env.root, "examples", "crossplane", "claim")
		namespace(t, ctx, "team-dns")
		objs := readObjects(t, filepath.Join(claimDir, "claim.yaml"))
		if _, err := os.Stat(filepath.Join(claimDir, "required.yaml")); err == nil {
			objs = append(readObjects(t, filepath.Join(claimDir, "required.yaml")), objs...)
			for _, o := range objs {
				if o.GetNamespace() != "" && o.GetNamespace() != "team-dns" {
					namespace(t, ctx, o.GetNamespace())
				}
			}
		}
		mustApply(t, ctx, objs...)
		var composite string
		eventually(t, controlplane.Hang, "claim bound, synced and composed", func() error {
			c, err := get(ctx, gvkClaim, "team-dns", "auth")
			if err != nil {
				return err
			}
			if err := condition(c, "Synced", "True"); err != nil {
				return err
			}
			composite, _, _ = unstructured.NestedString(c.Object, "spec", "resourceRef", "name")
			if composite == "" {
				return fmt.Errorf("no spec.resourceRef yet")
			}
			if got := composed(t, ctx, "team-dns", composite); len(got) == 0 || got["StatefulSet/auth"] == nil {
				return fmt.Errorf("composed in team-dns: %v", keys(got))
			}
			addr, _, _ := unstructured.NestedString(c.Object, "status", "bind", "serveAddress")
			if addr != "auth.team-dns.svc" {
				return fmt.Errorf("claim status.bind.serveAddress = %q", addr)
			}
			return nil
		})
		// Crossplane propagates connection details to the claim once the
		// composite is Ready: make the StatefulSet ready.
		stsReady(t, ctx, "team-dns", "auth", 2)
		gvkLegacy := schema.GroupVersionKind{Group: "xbind.unkin.net", Version: "v1alpha1", Kind: "XLegacyBindCluster"}
		eventuallyPoking(t, ctx, gvkLegacy, "", composite, controlplane.Hang, "connection Secret auth-dns", func() error {
			s, err := get(ctx, gvkSecret, "team-dns", "auth-dns")
			if err != nil {
				return err
			}
			data, _, _ := unstructured.NestedStringMap(s.Object, "data")
			var got []string
			for k := range data {
				got = append(got, k)
			}
			sort.Strings(got)
			want := []string{"namespace", "port", "primaryService", "serveAddress", "serveService", "tsigSecrets"}
			if !cmp.Equal(got, want) {
				return fmt.Errorf("keys %v, want %v", got, want)
			}
			return nil
		})
		t.Logf("claim composed %d objects into team-dns (composite %s) in %.1f s", len(composed(t, ctx, "team-dns", composite)), composite, time.Since(t0).Seconds())
	})
}

// stsReady writes the status the StatefulSet controller reports once every
// pod is Ready (no kube-controller-manager runs in these tests).
func stsReady(t *testing.T, ctx context.Context, ns, name string, replicas int) {
	t.Helper()
	sts := obj(t, fixture.Load(t, "statefulset-status.yaml", map[string]string{"NAME": name, "NAMESPACE": ns, "REPLICAS": strconv.Itoa(replicas)}))
	r, err := resource(sts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ApplyStatus(ctx, name, sts, metav1.ApplyOptions{FieldManager: "statefulset-controller", Force: true}); err != nil {
		t.Fatal(err)
	}
}

// eventuallyPoking is eventually, annotating the composite every 10 s: on
// Crossplane v2.1.0 the first composition of an XRD trips the XR's watch
// circuit breaker (see docs/kubernetes.md), which then drops watch events
// between its 30 s probes — a dropped event is never redelivered, so a
// poke stands in for the next one.
func eventuallyPoking(t *testing.T, ctx context.Context, gvk schema.GroupVersionKind, ns, name string, timeout time.Duration, what string, f func() error) {
	t.Helper()
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	o.SetNamespace(ns)
	r, err := resource(o)
	if err != nil {
		t.Fatal(err)
	}
	deadline, next, i := time.Now().Add(timeout), time.Now().Add(10*time.Second), 0
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		if time.Now().After(next) {
			i++
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.bind.unkin.net/wait":"%d"}}}`, i)
			if _, err := r.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
				t.Fatal(err)
			}
			next = time.Now().Add(10 * time.Second)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: not true after %s: %v", what, timeout, err)
}
