package render_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// recordingRand is DetRand that keeps every byte it hands out: the key
// material a render made.
type recordingRand struct {
	r    testutil.DetRand
	read [][]byte
}

func (r *recordingRand) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.read = append(r.read, slices.Clone(p[:n]))
	return n, err
}

// materialMarkers are text that only key material carries: a key
// statement's secret, PEM private keys, BIND's .private files.
var materialMarkers = []string{`secret "`, "-----BEGIN", "PRIVATE KEY", "Private-key-format", "PrivateKey:"}

// leaks lists where a render holds key material: any Secret at all, and any
// ConfigMap value or annotation holding a marker or the base64 of a
// known secret (or of any bytes the render read from its random source).
func leaks(objs []render.Object, known []string) []string {
	var out []string
	check := func(where, text string) {
		for _, m := range materialMarkers {
			if strings.Contains(text, m) {
				out = append(out, fmt.Sprintf("%s holds %q", where, m))
			}
		}
		for _, k := range known {
			if k != "" && strings.Contains(text, k) {
				out = append(out, fmt.Sprintf("%s holds the secret %.6s...", where, k))
			}
		}
	}
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *corev1.Secret:
			out = append(out, fmt.Sprintf("Secret %s is rendered (%s)", v.Name, o.Path))
			for k, b := range v.Data {
				check(fmt.Sprintf("Secret %s key %s", v.Name, k), string(b))
			}
		case *corev1.ConfigMap:
			for k, s := range v.Data {
				check(fmt.Sprintf("ConfigMap %s key %s", v.Name, k), s)
			}
			for k, s := range v.Annotations {
				check(fmt.Sprintf("ConfigMap %s annotation %s", v.Name, k), s)
			}
		}
	}
	return out
}

// knownSecrets are the base64 texts a render's Secrets hold (TSIG material,
// and each line of DNSSEC private key files) and those of every chunk the
// render read from its random source.
func knownSecrets(objs []render.Object, rnd *recordingRand) []string {
	var out []string
	for _, o := range objs {
		s, ok := o.Obj.(*corev1.Secret)
		if !ok {
			continue
		}
		if v := s.Data[objects.SecretKeySecret]; len(v) > 0 {
			out = append(out, string(v))
		}
		for k, v := range s.Data {
			if !strings.HasSuffix(k, dnssec.SuffixPrivate) {
				continue
			}
			for _, l := range strings.Split(string(v), "\n") {
				if _, val, ok := strings.Cut(l, ": "); ok && len(val) >= 16 && !strings.Contains(l, "Created") && !strings.Contains(l, "Publish") && !strings.Contains(l, "Activate") {
					out = append(out, strings.TrimSpace(val))
				}
			}
		}
	}
	for _, b := range rnd.read {
		if len(b) >= 8 {
			out = append(out, base64.StdEncoding.EncodeToString(b))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// publicKeys are the DNSKEY lines of the .key files of a render's DNSSEC
// Secrets: what a user pastes into spec.dnssec.publicKeys, by cluster.
func publicKeys(objs []render.Object) map[string][]any {
	out := map[string][]any{}
	for _, o := range objs {
		s, ok := o.Obj.(*corev1.Secret)
		if !ok || s.Labels["app.kubernetes.io/component"] != objects.ComponentDNSSECKeys {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(s.Data)) {
			if !strings.HasSuffix(k, dnssec.SuffixKey) {
				continue
			}
			for _, l := range strings.Split(string(s.Data[k]), "\n") {
				if l != "" && !strings.HasPrefix(l, ";") {
					out[s.Labels["app.kubernetes.io/instance"]] = append(out[s.Labels["app.kubernetes.io/instance"]], l)
				}
			}
		}
	}
	return out
}

// externalSecrets sets spec.secrets external on every BindCluster of items,
// and spec.dnssec.publicKeys where pub has keys for it.
func externalSecrets(t *testing.T, items []model.Item, pub map[string][]any) []model.Item {
	t.Helper()
	for _, it := range items {
		if it.Source.Ref.Kind != "BindCluster" {
			continue
		}
		name := it.Source.Ref.Name
		items = testutil.EditItem(t, items, "BindCluster", name, func(obj map[string]any) {
			sp, _ := obj["spec"].(map[string]any)
			if sp == nil {
				sp = map[string]any{}
				obj["spec"] = sp
			}
			sp["secrets"] = "external"
			if keys := pub[name]; len(keys) > 0 {
				sp["dnssec"] = map[string]any{"publicKeys": keys}
			}
		})
	}
	return items
}

// TestExternalSecretsRenderNoMaterial renders every example (the
// authoritative one signs a zone) with spec.secrets external on every
// cluster, the DNSSEC public keys taken from a rendered-mode render, and
// fails on any Secret in the output, on key material in any ConfigMap
// (statement text, private key headers, the base64 of any secret the
// rendered mode made or of anything read from the random source), on a
// random source read at all, and on an expected Secret that no info result
// names (object and field) or the StatefulSet does not mount. The rendered
// mode of the same package must trip the same check, or the check could
// not fail.
func TestExternalSecretsRenderNoMaterial(t *testing.T) {
	root := bindtools.RepoRoot(t)
	for _, ex := range []string{"authoritative", "resolver", "multi-cluster"} {
		t.Run(ex, func(t *testing.T) {
			items := testutil.ReadItems(t, filepath.Join(root, "examples", ex))
			rendRand := &recordingRand{}
			rendered, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: rendRand})
			if rs.HasErrors() {
				t.Fatalf("rendered mode: %v", rs)
			}
			known := knownSecrets(rendered, rendRand)
			if len(known) == 0 || len(leaks(rendered, known)) == 0 {
				t.Fatalf("the check finds no key material in the rendered mode's output: it could not fail")
			}

			extRand := &recordingRand{}
			ext := externalSecrets(t, items, publicKeys(rendered))
			objs, rs := pipeline.Run(pipeline.Input{Items: ext}, render.Options{Rand: extRand})
			if rs.HasErrors() {
				t.Fatalf("external mode: %v", rs)
			}
			for _, l := range leaks(objs, known) {
				t.Errorf("spec.secrets external: %s", l)
			}
			if len(extRand.read) > 0 {
				t.Errorf("spec.secrets external: the render read %d chunks of key material from its random source", len(extRand.read))
			}
			checkExpectedSecrets(t, rendered, objs, rs)
		})
	}
}

// checkExpectedSecrets: every Secret the rendered mode wrote (but the
// keys bundle, which external mode does away with) is named by a located
// info result of the external render and mounted by its cluster's
// StatefulSet (a DNSSEC Secret: on the primary, optional).
func checkExpectedSecrets(t *testing.T, rendered, objs []render.Object, rs diag.Results) {
	t.Helper()
	mounted := map[string]bool{}
	for _, o := range objs {
		if s, ok := o.Obj.(*appsv1.StatefulSet); ok {
			for _, v := range s.Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					mounted[s.Namespace+"/"+v.Secret.SecretName] = true
				}
			}
		}
	}
	for _, o := range rendered {
		s, ok := o.Obj.(*corev1.Secret)
		if !ok || s.Labels["app.kubernetes.io/component"] == objects.ComponentKeys {
			continue
		}
		id := s.Namespace + "/" + s.Name
		if !mounted[id] {
			t.Errorf("Secret %s: no StatefulSet mounts it in external mode", id)
		}
		named := false
		for _, r := range rs {
			if r.Severity == diag.Info && r.Field != "" && r.Source.Ref.Name != "" && strings.Contains(r.Message, fmt.Sprintf("Secret %q in namespace %q", s.Name, s.Namespace)) {
				named = true
				for _, k := range knownSecrets([]render.Object{o}, &recordingRand{}) {
					if strings.Contains(r.Message, k) {
						t.Errorf("the info result on Secret %s holds its material", id)
					}
				}
			}
		}
		if !named {
			t.Errorf("Secret %s: no located info result names it in external mode", id)
		}
	}
	if t.Failed() {
		for _, r := range rs {
			t.Log(r)
		}
	}
}
