package krm_test

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/krm"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// bothPaths runs a ResourceList through the streaming codec (Processor.Run)
// and through the SDK (fn.Run with Processor.Process).
func bothPaths(t *testing.T, in string) map[string]*fn.ResourceList {
	t.Helper()
	out := map[string]*fn.ResourceList{}
	for name, run := range map[string]func(p *krm.Processor) ([]byte, error){
		"stream": func(p *krm.Processor) ([]byte, error) { return p.Run([]byte(in)) },
		"sdk": func(p *krm.Processor) ([]byte, error) {
			return fn.Run(fn.ResourceListProcessorFunc(p.Process), []byte(in))
		},
	} {
		b, _ := run(&krm.Processor{Mode: krm.RenderMode, Rand: &testutil.DetRand{}})
		rl, err := fn.ParseResourceList(b)
		if err != nil {
			t.Fatalf("%s: cannot parse output: %v\n%s", name, err, b)
		}
		out[name] = rl
	}
	return out
}

const inputHead = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: bind.unkin.net/v1alpha1
  kind: BindCluster
  metadata: {name: dns, namespace: dns}
  spec: {}
`

// TestDuplicateFieldBothPaths: two records: blocks in one item are a
// located "duplicate field" error on both KRM paths, and nothing is
// rendered (docs/design.md#nothing-refused; YAML-to-JSON keeps the last block silently).
func TestDuplicateFieldBothPaths(t *testing.T) {
	in := inputHead + `- apiVersion: bind.unkin.net/v1alpha1
  kind: BindZone
  metadata: {name: z, namespace: dns}
  spec:
    clusterRef: dns
    zoneName: example.com
    nameservers: [ns1.example.net.]
    records:
    - {name: a, type: A, values: [192.0.2.1]}
    records:
    - {name: b, type: A, values: [192.0.2.2]}
`
	for path, rl := range bothPaths(t, in) {
		found := false
		for _, r := range rl.Results {
			if r.Severity == fn.Error && r.ResourceRef != nil && r.ResourceRef.Name == "z" && r.Field != nil && r.Field.Path == "spec.records" && strings.Contains(r.Message, `duplicate field "records"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no located duplicate field error in %v", path, rl.Results)
		}
		for _, o := range rl.Items {
			if o.GetKind() == "ConfigMap" {
				t.Errorf("%s: rendered %s despite the error", path, o.GetName())
			}
		}
	}
}

// TestNullAnnotationsBothPaths: metadata.annotations: null (every entry
// commented out) is an object without annotations, on both paths.
func TestNullAnnotationsBothPaths(t *testing.T) {
	in := inputHead + `- apiVersion: bind.unkin.net/v1alpha1
  kind: BindZone
  metadata:
    name: z
    namespace: dns
    annotations:
      # team: dns
  spec:
    clusterRef: dns
    zoneName: example.com
    nameservers: [ns1.example.net.]
`
	for path, rl := range bothPaths(t, in) {
		for _, r := range rl.Results {
			if r.Severity == fn.Error {
				t.Errorf("%s: %v", path, r)
			}
		}
		rendered := false
		for _, o := range rl.Items {
			if o.GetKind() == "ConfigMap" && o.GetName() == "dns-config" {
				rendered = true
			}
			if o.GetKind() == "BindZone" && o.GetAnnotation(fn.KptLocalConfig) != "true" {
				t.Errorf("%s: the BindZone lost its local-config annotation", path)
			}
		}
		if !rendered {
			t.Errorf("%s: nothing rendered", path)
		}
	}
}

// TestQuotedAnnotationsKey: a quoted "annotations": key is the annotations
// map; marking the input local-config must not add a second annotations
// block (which grew on every re-render), on either path, render after
// render.
func TestQuotedAnnotationsKey(t *testing.T) {
	in := inputHead + `- apiVersion: bind.unkin.net/v1alpha1
  kind: BindZone
  metadata:
    name: z
    namespace: dns
    "annotations":
      team: dns
  spec:
    clusterRef: dns
    zoneName: example.com
    nameservers: [ns1.example.net.]
`
	for name, run := range map[string]func(p *krm.Processor, in []byte) ([]byte, error){
		"stream": func(p *krm.Processor, in []byte) ([]byte, error) { return p.Run(in) },
		"sdk": func(p *krm.Processor, in []byte) ([]byte, error) {
			return fn.Run(fn.ResourceListProcessorFunc(p.Process), in)
		},
	} {
		doc := []byte(in)
		for round := 1; round <= 2; round++ {
			out, err := run(&krm.Processor{Mode: krm.RenderMode, Rand: &testutil.DetRand{}}, doc)
			if err != nil {
				t.Fatalf("%s round %d: %v\n%s", name, round, err, out)
			}
			// A second annotations block would be a duplicate key: the
			// strict decoder the function itself reads items with says so.
			var doc any
			if err := yaml.UnmarshalStrict(out, &doc); err != nil {
				t.Errorf("%s round %d: the output is not strict YAML: %v", name, round, err)
			}
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range rl.Items {
				if o.GetKind() == "BindZone" && (o.GetAnnotation("team") != "dns" || o.GetAnnotation(fn.KptLocalConfig) != "true") {
					t.Errorf("%s round %d: BindZone annotations %v", name, round, o.GetAnnotations())
				}
			}
			doc = out
		}
	}
}

// TestForeignManagedObjectsPassThrough: objects that carry
// app.kubernetes.io/managed-by: bind-fn but were not rendered by it (a
// NetworkPolicy with the StatefulSet's labels, a ConfigMap in another
// namespace) are passed through on both paths, not dropped as previous
// output.
func TestForeignManagedObjectsPassThrough(t *testing.T) {
	labels := `
    labels:
      app.kubernetes.io/name: bind-fn
      app.kubernetes.io/instance: dns
      app.kubernetes.io/component: server
      app.kubernetes.io/managed-by: bind-fn
      app.kubernetes.io/part-of: bind-fn`
	in := inputHead + `- apiVersion: networking.k8s.io/v1
  kind: NetworkPolicy
  metadata:
    name: dns
    namespace: dns` + labels + `
  spec:
    podSelector: {}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
    namespace: other` + labels + `
  data: {a: b}
`
	for path, rl := range bothPaths(t, in) {
		found := map[string]bool{}
		for _, o := range rl.Items {
			found[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
		}
		for _, want := range []string{"NetworkPolicy/dns/dns", "ConfigMap/other/settings", "ConfigMap/dns/dns-config"} {
			if !found[want] {
				t.Errorf("%s: %s missing from the output", path, want)
			}
		}
	}
}
