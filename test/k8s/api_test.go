package k8s

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/test/k8s/fixture"
)

func crdFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(env.root, "config", "crd", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in config/crd: %v", err)
	}
	return files
}

// TestCRDsInstall: every CRD of config/crd is accepted by kube-apiserver
// (CEL cost budget included) and becomes Established, without a warning.
func TestCRDsInstall(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	crds := installCRDs(t, ctx, crdFiles(t)...)
	t.Logf("%d CRDs established in %.1f s", len(crds), time.Since(t0).Seconds())
}

func obj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return &unstructured.Unstructured{Object: m}
}

// zone is testdata/cel-zone.yaml, a BindZone, with more spec lines.
func zone(t *testing.T, spec string) string {
	t.Helper()
	return fixture.Load(t, "cel-zone.yaml", nil) + spec
}

// record is testdata/cel-record.yaml, a DNSRecord, with more spec lines.
func record(t *testing.T, spec string) string {
	t.Helper()
	return fixture.Load(t, "cel-record.yaml", nil) + spec
}

// TestCELRules: the CRDs' CEL rules and bounds, on the real API server
// (server-side apply, dry run): what must be refused is, with the rule's
// message; what must pass does.
func TestCELRules(t *testing.T) {
	ctx := context.Background()
	installCRDs(t, ctx, crdFiles(t)...)
	namespace(t, ctx, "cel")
	many := make([]string, 65)
	for i := range many {
		many[i] = fmt.Sprintf("192.0.2.%d", i+1)
	}
	cases := map[string]struct {
		reason  string
		obj     string
		wantErr string // "" = accepted
	}{
		"ApexNSAt": {"an apex NS RRset ('@') belongs to BindZone.spec.nameservers",
			record(t, "  name: \"@\"\n  type: NS\n"), "an apex NS RRset cannot be managed by a DNSRecord"},
		"ApexNSNoName": {"no name is the apex too, and the type is case-insensitive",
			record(t, "  type: ns\n"), "an apex NS RRset cannot be managed by a DNSRecord"},
		"DelegationNS": {"an NS RRset below the apex is a delegation: allowed",
			record(t, "  name: sub\n  type: NS\n"), ""},
		"ApexA": {"other apex RRsets are fine",
			record(t, "  name: \"@\"\n  type: A\n  values: [\"192.0.2.1\"]\n"), ""},
		"RecordTypeTooLong": {"a type over 16 characters is refused (pattern and maxLength)",
			record(t, "  name: www\n  type: ABCDEFGHIJKLMNOPQ\n"), "spec.type"},
		"SecondaryWithoutPrimaries": {"a secondary zone needs primaries",
			zone(t, "  type: secondary\n"), "a secondary or stub zone needs spec.primaries"},
		"StubWithoutPrimaries": {"a stub zone needs primaries",
			zone(t, "  type: stub\n  primaries: []\n"), "a secondary or stub zone needs spec.primaries"},
		"SecondaryWithPrimaries": {"a secondary with a primary is fine",
			zone(t, "  type: secondary\n  primaries: [\"192.0.2.1 port 5353\"]\n"), ""},
		"ForwardWithoutForwarders": {"a forward zone needs forwarders",
			zone(t, "  type: forward\n"), "a forward zone needs spec.forwarders"},
		"ForwardWithForwarders": {"a forward zone with forwarders is fine",
			zone(t, "  type: forward\n  forwarders: [\"192.0.2.100 port 8600\"]\n"), ""},
		"DynamicWithoutKey": {"a dynamic zone needs its update key",
			zone(t, "  dynamicUpdate: true\n"), "a dynamic zone needs spec.updateKeyRef"},
		"DynamicWithKey": {"a dynamic zone with a key is fine",
			zone(t, "  dynamicUpdate: true\n  updateKeyRef: externaldns-key\n"), ""},
		"TooManyPrimaries": {"primaries are bounded (64) so the rules' cost is",
			zone(t, "  type: secondary\n  primaries: ["+strings.Join(many, ", ")+"]\n"), "spec.primaries: Too many"},
		"UnknownZoneType": {"the zone type is an enum",
			zone(t, "  type: master\n"), "spec.type: Unsupported value"},
		"PlainPrimary": {"a primary zone needs nothing more",
			zone(t, ""), ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, warn, err := apply(ctx, obj(t, tc.obj), true)
			if len(warn) > 0 {
				t.Errorf("%s: warnings %q", tc.reason, warn)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("%s: refused: %v", tc.reason, err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("%s: accepted, want an error containing %q", tc.reason, tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("%s: error %q lacks %q", tc.reason, err, tc.wantErr)
			}
		})
	}
}

// TestBadExamples: of examples/bad, the API server's CEL refuses the
// mistakes it can see in one object (apex NS, dynamic zone without key);
// the others are valid objects that fn-validate refuses with the package.
func TestBadExamples(t *testing.T) {
	ctx := context.Background()
	installCRDs(t, ctx, crdFiles(t)...)
	namespace(t, ctx, "dns")
	want := map[string]string{
		"apex-ns.yaml": "an apex NS RRset cannot be managed by a DNSRecord",
		"dynamic.yaml": "a dynamic zone needs spec.updateKeyRef",
		"cluster.yaml": "", "cname.yaml": "", "record.yaml": "", "zone.yaml": "", "mx.yaml": "", "missing-dot.yaml": "",
	}
	for file, wantErr := range want {
		t.Run(file, func(t *testing.T) {
			for _, o := range readObjects(t, filepath.Join(env.root, "examples", "bad", file)) {
				_, _, err := apply(ctx, o, true)
				switch {
				case wantErr == "" && err != nil:
					t.Errorf("%s: refused by the API server: %v", id(o), err)
				case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
					t.Errorf("%s: error %v, want one containing %q", id(o), err, wantErr)
				}
			}
		})
	}
}

// TestExamplesApply renders every example with kpt and the built functions,
// then server-side applies the inputs and the rendered objects, dry run
// and for real, with no warning; a re-render applied again changes no
// object (same resourceVersion and managedFields).
func TestExamplesApply(t *testing.T) {
	ctx := context.Background()
	installCRDs(t, ctx, crdFiles(t)...)
	for _, ex := range []string{"authoritative", "resolver"} {
		t.Run(ex, func(t *testing.T) {
			dir := kptPackage(t, ex)
			t0 := time.Now()
			kptRender(t, dir)
			rendered, inputs := packageObjects(t, dir)
			if len(rendered) == 0 || len(inputs) == 0 {
				t.Fatalf("render gave %d objects for %d inputs", len(rendered), len(inputs))
			}
			nss := map[string]bool{}
			for _, o := range append(append([]*unstructured.Unstructured{}, rendered...), inputs...) {
				if ns := o.GetNamespace(); ns != "" && !nss[ns] {
					nss[ns] = true
					namespace(t, ctx, ns)
				}
			}
			all := append(append([]*unstructured.Unstructured{}, inputs...), rendered...)
			// Release the Services' ClusterIPs (the example pins 10.96.53.53,
			// which the Crossplane test's XR pins too): no namespace
			// controller runs here to clean up.
			t.Cleanup(func() {
				for _, o := range rendered {
					if o.GetKind() != "Service" {
						continue
					}
					if r, err := resource(o); err == nil {
						_ = r.Delete(ctx, o.GetName(), metav1.DeleteOptions{})
					}
				}
			})
			for _, dry := range []bool{true, false} {
				for _, o := range all {
					_, warn, err := apply(ctx, o, dry)
					if err != nil {
						t.Errorf("apply (dry run %v) %s: %v", dry, id(o), err)
					}
					if len(warn) > 0 {
						t.Errorf("apply (dry run %v) %s: warnings %q", dry, id(o), warn)
					}
				}
			}
			first := state(t, ctx, all)
			kptRender(t, dir)
			rendered2, inputs2 := packageObjects(t, dir)
			again := append(append([]*unstructured.Unstructured{}, inputs2...), rendered2...)
			if len(again) != len(all) {
				t.Errorf("re-render: %d objects, first render %d", len(again), len(all))
			}
			mustApply(t, ctx, again...)
			if diff := cmp.Diff(first, state(t, ctx, again)); diff != "" {
				t.Errorf("applying the re-render changed objects (-first +second resourceVersion/managedFields):\n%s", diff)
			}
			t.Logf("%d inputs + %d rendered objects applied (dry run, real, re-render) in %.1f s", len(inputs), len(rendered), time.Since(t0).Seconds())
		})
	}
}

// state is each object's resourceVersion and managedFields on the server.
func state(t *testing.T, ctx context.Context, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		got, err := get(ctx, o.GroupVersionKind(), o.GetNamespace(), o.GetName())
		if err != nil {
			t.Fatalf("get %s: %v", id(o), err)
		}
		mf, _ := yaml.Marshal(got.GetManagedFields())
		out[id(o)] = got.GetResourceVersion() + "\n" + string(mf)
	}
	return out
}

// TestWarningsAreSeen: the warning collector the apply tests rely on does
// see the API server's Warning headers (a pod template with the seccomp
// annotation that stopped working in 1.27 draws one), so "no warning" above
// means none.
func TestWarningsAreSeen(t *testing.T) {
	ctx := context.Background()
	namespace(t, ctx, "cel")
	d := obj(t, fixture.Load(t, "seccomp-deployment.yaml", nil))
	_, warn, err := apply(ctx, d, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(warn) == 0 || !strings.Contains(strings.Join(warn, "\n"), "seccomp") {
		t.Errorf("no seccomp warning collected: %q", warn)
	}
}
