package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
		Labels      map[string]string `json:"labels"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
	Spec map[string]any    `json:"spec"`
}

func parseStream(t *testing.T, out []byte) []object {
	t.Helper()
	var objs []object
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatalf("cannot parse output document: %v\n%s", err, doc)
		}
		objs = append(objs, o)
	}
	return objs
}

func index(objs []object) map[string]object {
	m := map[string]object{}
	for _, o := range objs {
		m[o.Kind+"/"+o.Metadata.Name] = o
	}
	return m
}

// expect are the objects each example must render to (a subset).
var expect = map[string]struct {
	cluster  string
	replicas float64
	zones    []string // substrings of named.conf.primary
}{
	"authoritative": {"auth", 3, []string{`zone "example.com"`, `zone "apps.example.com"`, `zone "catalog.example.internal"`, `view "internal"`, `dnssec-policy "standard"`, `response-policy`}},
	"resolver":      {"resolver", 2, []string{`zone "example.com"`, `recursion yes;`, `response-policy`}},
}

func checkRendered(t *testing.T, ex string, objs []object) {
	t.Helper()
	want := expect[ex]
	m := index(objs)
	sts, ok := m["StatefulSet/"+want.cluster]
	if !ok {
		t.Fatalf("no StatefulSet %q in the output; kinds: %v", want.cluster, kinds(objs))
	}
	if got := sts.Spec["replicas"]; got != want.replicas {
		t.Errorf("StatefulSet replicas = %v, want %v", got, want.replicas)
	}
	for _, n := range []string{"Service/" + want.cluster, "Service/" + want.cluster + "-primary", "Service/" + want.cluster + "-headless", "PodDisruptionBudget/" + want.cluster, "Secret/" + want.cluster + "-keys", "ConfigMap/" + want.cluster + "-zones-0"} {
		if _, ok := m[n]; !ok {
			t.Errorf("missing %s in the output", n)
		}
	}
	cfg, ok := m["ConfigMap/"+want.cluster+"-config"]
	if !ok {
		t.Fatalf("no ConfigMap %s-config", want.cluster)
	}
	// The zone statements are in the zones ConfigMaps, which named.conf
	// includes (docs/state.md#shards).
	conf := cfg.Data["named.conf.primary"]
	for _, o := range objs {
		if o.Kind == "ConfigMap" && strings.HasPrefix(o.Metadata.Name, want.cluster+"-zones-") {
			for k, v := range o.Data {
				if strings.HasPrefix(k, "zones.primary") {
					conf += v
				}
			}
		}
	}
	for _, z := range want.zones {
		if !strings.Contains(conf, z) {
			t.Errorf("named.conf.primary lacks %q", z)
		}
	}
	for _, o := range objs {
		if o.Metadata.Labels["app.kubernetes.io/managed-by"] == "bind-fn" && o.Metadata.Namespace != "dns" {
			t.Errorf("%s/%s rendered into namespace %q, want dns", o.Kind, o.Metadata.Name, o.Metadata.Namespace)
		}
	}
}

func kinds(objs []object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Kind+"/"+o.Metadata.Name)
	}
	return out
}

// TestKustomize renders the examples with the real kustomize CLI, bind-fn
// as an exec transformer. Inputs are local-config: kustomize drops them.
func TestKustomize(t *testing.T) {
	kustomize := bindtools.Bin(t, "kustomize")
	bindtools.Bin(t, "fn-render")
	root := bindtools.RepoRoot(t)
	for ex := range expect {
		t.Run(ex, func(t *testing.T) {
			cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join(root, "examples", "kustomize", ex))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("kustomize build: %v\n%s", err, stderr.String())
			}
			objs := parseStream(t, out)
			checkRendered(t, ex, objs)
			for _, o := range objs {
				if strings.HasPrefix(o.APIVersion, "bind.unkin.net/") {
					t.Errorf("input %s/%s leaked into kustomize output (should be local-config)", o.Kind, o.Metadata.Name)
				}
			}
			// Same input, same bytes — kustomize has no previous output, so
			// this is the documented plain-kustomize behaviour.
			again, err := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join(root, "examples", "kustomize", ex)).Output()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(withoutSecrets(t, out), withoutSecrets(t, again)) {
				t.Errorf("two kustomize builds differ beyond generated key material")
			}
		})
	}
}

// withoutSecrets drops Secrets (new material on every plain kustomize build)
// and the DS records made from the new DNSSEC keys.
func withoutSecrets(t *testing.T, out []byte) []byte {
	var keep [][]byte
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		if !bytes.Contains(doc, []byte("\nkind: Secret\n")) && !bytes.Contains(doc, []byte("app.kubernetes.io/component: dnssec-ds")) {
			keep = append(keep, doc)
		}
	}
	return bytes.Join(keep, []byte("\n---\n"))
}

// kptPackage copies an example into a temp dir with a Kptfile whose
// pipeline execs the built functions.
func kptPackage(t *testing.T, ex string) string {
	t.Helper()
	root := bindtools.RepoRoot(t)
	dir := filepath.Join(t.TempDir(), ex)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "examples", ex))); err != nil {
		t.Fatal(err)
	}
	kptfile := filepath.Join(dir, "Kptfile")
	b, err := os.ReadFile(kptfile)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "- image: git.unkin.net/unkin/bind-fn/fn-validate:v0.1.0", "- exec: "+bindtools.Bin(t, "fn-validate"))
	s = strings.ReplaceAll(s, "- image: git.unkin.net/unkin/bind-fn/fn-render:v0.1.0", "- exec: "+bindtools.Bin(t, "fn-render"))
	if s == string(b) {
		t.Fatal("Kptfile pipeline not rewritten")
	}
	if err := os.WriteFile(kptfile, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readPackage(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKpt renders the examples with the real kpt CLI (fn render
// --allow-exec), then renders the rendered package again: nothing changes.
func TestKpt(t *testing.T) {
	kpt := bindtools.Bin(t, "kpt")
	for ex := range expect {
		t.Run(ex, func(t *testing.T) {
			dir := kptPackage(t, ex)
			render := func() {
				cmd := exec.Command(kpt, "fn", "render", "--allow-exec", dir)
				cmd.Dir = filepath.Dir(dir)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("kpt fn render: %v\n%s", err, out)
				}
			}
			render()
			first := readPackage(t, dir)
			var objs []object
			for p, s := range first {
				if strings.HasPrefix(p, "rendered/") {
					objs = append(objs, parseStream(t, []byte(s))...)
				}
			}
			checkRendered(t, ex, objs)
			for p, s := range first {
				if strings.HasSuffix(p, ".yaml") && strings.Contains(s, "apiVersion: bind.unkin.net/") && !strings.Contains(s, "config.kubernetes.io/local-config: \"true\"") {
					t.Errorf("%s: inputs not marked local-config", p)
				}
			}
			render()
			if diff := cmp.Diff(first, readPackage(t, dir)); diff != "" {
				t.Errorf("second kpt fn render changed the package (-first +second):\n%s", diff)
			}
		})
	}
}

// TestKustomizeErrors: kustomize shows a failing function's stderr but not
// the results in its output, so fn-render writes its error results there:
// the user sees the object, the field and the file, not just "exit status 1".
func TestKustomizeErrors(t *testing.T) {
	kustomize := bindtools.Bin(t, "kustomize")
	bindtools.Bin(t, "fn-render")
	cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join("testdata", "kustomize-bad"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("kustomize build succeeded on a package with a dangling reference:\n%s", stdout.String())
	}
	// With `buildMetadata: [originAnnotations]` kustomize tells the
	// transformer each object's file, and the result names it.
	want := `[error] bind.unkin.net/v1alpha1/DNSRecord/dns/www spec.zoneRef: cannot resolve BindZone "example-org"`
	if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "(input.yaml, document 2)") {
		t.Errorf("kustomize's stderr lacks the located result %q with its file:\n%s", want, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("kustomize wrote objects despite the error:\n%s", stdout.String())
	}
}
