package k8s

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
)

const fieldManager = "bind-fn-test"

// decode reads every object of a YAML stream.
func decode(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

func readObjects(t *testing.T, paths ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decode(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, objs...)
	}
	return out
}

func id(o *unstructured.Unstructured) string {
	s := o.GetKind() + " "
	if o.GetNamespace() != "" {
		s += o.GetNamespace() + "/"
	}
	return s + o.GetName()
}

// resource is the dynamic client of an object's kind (the mapper is reset
// once when a kind is unknown: CRDs installed since the last discovery).
func resource(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := o.GroupVersionKind()
	m, err := env.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		env.mapper.Reset()
		if m, err = env.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, fmt.Errorf("%s: %w", id(o), err)
		}
	}
	if m.Scope.Name() == "namespace" {
		return env.dyn.Resource(m.Resource).Namespace(o.GetNamespace()), nil
	}
	return env.dyn.Resource(m.Resource), nil
}

// apply server-side applies an object (dry run or for real) and returns the
// result and the API server's warnings.
func apply(ctx context.Context, o *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, []string, error) {
	r, err := resource(o)
	if err != nil {
		return nil, nil, err
	}
	env.warn.take()
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	got, err := r.Apply(ctx, o.GetName(), o, opts)
	return got, env.warn.take(), err
}

// mustApply applies for real and fails on an error or a warning.
func mustApply(t *testing.T, ctx context.Context, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		_, warn, err := apply(ctx, o, false)
		if err != nil {
			t.Fatalf("apply %s: %v", id(o), err)
		}
		if len(warn) > 0 {
			t.Errorf("apply %s: warnings %q", id(o), warn)
		}
	}
}

func get(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	o.SetNamespace(ns)
	o.SetName(name)
	r, err := resource(o)
	if err != nil {
		return nil, err
	}
	return r.Get(ctx, name, metav1.GetOptions{})
}

func list(ctx context.Context, gvk schema.GroupVersionKind, ns string, sel string) ([]unstructured.Unstructured, error) {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	o.SetNamespace(ns)
	r, err := resource(o)
	if err != nil {
		return nil, err
	}
	l, err := r.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// eventually polls f until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: not true after %s: %v", what, timeout, err)
}

var (
	gvkNamespace = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	gvkConfigMap = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	gvkSecret    = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	gvkCRD       = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
)

func namespace(t *testing.T, ctx context.Context, names ...string) {
	t.Helper()
	for _, n := range names {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(gvkNamespace)
		o.SetName(n)
		mustApply(t, ctx, o)
	}
}

// installCRDs applies CRD files and waits until each is Established.
func installCRDs(t *testing.T, ctx context.Context, files ...string) []*unstructured.Unstructured {
	t.Helper()
	crds := readObjects(t, files...)
	mustApply(t, ctx, crds...)
	for _, c := range crds {
		eventually(t, controlplane.Hang, "CRD "+c.GetName()+" Established", func() error {
			got, err := get(ctx, gvkCRD, "", c.GetName())
			if err != nil {
				return err
			}
			return condition(got, "Established", "True")
		})
	}
	env.mapper.Reset()
	return crds
}

// condition checks status.conditions[type] has the status.
func condition(o *unstructured.Unstructured, typ, status string) error {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			if m["status"] == status {
				return nil
			}
			return fmt.Errorf("%s: condition %s=%v (%v: %v)", id(o), typ, m["status"], m["reason"], m["message"])
		}
	}
	return fmt.Errorf("%s: no condition %s yet (conditions %v)", id(o), typ, conds)
}

func conditionMessage(o *unstructured.Unstructured, typ string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			status, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
			message, _ = m["message"].(string)
		}
	}
	return
}

// kptPackage copies an example into dir with a Kptfile whose pipeline execs
// the built functions (as the Makefile's example target does).
func kptPackage(t *testing.T, ex string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ex)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(env.root, "examples", ex))); err != nil {
		t.Fatal(err)
	}
	kptfile := filepath.Join(dir, "Kptfile")
	b, err := os.ReadFile(kptfile)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "- image: git.unkin.net/unkin/bind-fn/fn-validate:v0.1.0", "- exec: "+filepath.Join(env.bin, "fn-validate"))
	s = strings.ReplaceAll(s, "- image: git.unkin.net/unkin/bind-fn/fn-render:v0.1.0", "- exec: "+filepath.Join(env.bin, "fn-render"))
	if s == string(b) {
		t.Fatal("Kptfile pipeline not rewritten")
	}
	if err := os.WriteFile(kptfile, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kptRender runs kpt fn render on the package.
func kptRender(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(env.bin, "kpt"), "fn", "render", "--allow-exec", dir)
	cmd.Dir = filepath.Dir(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kpt fn render: %v\n%s", err, out)
	}
}

// packageObjects are the objects of a package, split into what kpt would
// apply (not local-config: the rendered output) and the inputs (the BIND
// resources, local-config after the render).
func packageObjects(t *testing.T, dir string) (rendered, inputs []*unstructured.Unstructured) {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, o := range readObjects(t, files...) {
		if o.GetKind() == "Kptfile" || o.GetKind() == "Kustomization" {
			continue
		}
		if o.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
			inputs = append(inputs, o)
			continue
		}
		rendered = append(rendered, o)
	}
	return rendered, inputs
}
