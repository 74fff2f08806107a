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
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
	"git.unkin.net/unkin/bind-fn/internal/xfn"
)

// claimDir is examples/crossplane/claim.
func claimDir(t *testing.T) string {
	return filepath.Join(bindtools.RepoRoot(t), "examples", "crossplane", "claim")
}

// claimRender runs crossplane render on the claim's composite (xr.yaml)
// with the given Composition of examples/crossplane/claim.
func claimRender(t *testing.T, port int, xr, composition string, extra ...string) []byte {
	t.Helper()
	out, stderr, err := claimRenderErr(t, port, xr, composition, extra...)
	if err != nil {
		t.Fatalf("crossplane render %s %s: %v\n%s", xr, composition, err, stderr)
	}
	return out
}

func claimRenderErr(t *testing.T, port int, xr, composition string, extra ...string) ([]byte, string, error) {
	t.Helper()
	dir := claimDir(t)
	return renderRun(t, port, dir, xr, composition, filepath.Join(dir, "..", "functions.yaml"), extra...)
}

// unwrapped replaces each provider-kubernetes Object by the manifest it
// wraps (for comparing with a native render).
func unwrapped(ds []doc) []doc {
	var out []doc
	for _, d := range ds {
		if xfn.IsObject(d) {
			m, _ := xfn.Unwrap(d)
			out = append(out, m)
			continue
		}
		out = append(out, d)
	}
	return out
}

// redactWrapped redacts key material in Secrets, wrapped or not.
func redactWrapped(t *testing.T, ds []doc) []byte {
	t.Helper()
	for _, d := range ds {
		if xfn.IsObject(d) {
			m, _ := xfn.Unwrap(d)
			redacted(t, []doc{m}) // redacts in place
		}
	}
	return redacted(t, ds)
}

// TestCrossplaneClaimRender: the real crossplane render of the claim's
// composite (the legacy XLegacyBindCluster, as Crossplane creates it from
// claim.yaml) with native objects and wrapped in provider-kubernetes
// Objects, against golden output. Every object lands in the claim's
// namespace; the two renders carry identical named.conf and zone data; a
// second render fed the first one's composed resources as observed state
// (wrapped Objects included) gives an identical desired state.
func TestCrossplaneClaimRender(t *testing.T) {
	port := startFunction(t, bindtools.Bin(t, "function-bind"))
	renders := map[string][]doc{}
	for name, comp := range map[string]string{"native": "composition.yaml", "objects": "composition-objects.yaml"} {
		t.Run(name, func(t *testing.T) {
			first := docs(t, claimRender(t, port, "xr.yaml", comp, "--include-function-results"))
			renders[name] = first
			golden.Check(t, filepath.Join("testdata", "crossplane", "claim/"+name+".yaml"), redactWrapped(t, docs(t, claimRender(t, port, "xr.yaml", comp, "--include-function-results"))))

			for _, d := range unwrapped(first) {
				k, n := kindName(d)
				if k == xfn.LegacyKind || k == "Result" {
					continue
				}
				md, _ := d["metadata"].(doc)
				if ns, _ := md["namespace"].(string); ns != "team-dns" {
					t.Errorf("%s %s is rendered into namespace %q, not the claim's (team-dns)", k, n, ns)
				}
			}
			for _, d := range first {
				if k, _ := kindName(d); k == "Result" {
					t.Errorf("unexpected result: %v", d)
				}
			}

			observed := filepath.Join(t.TempDir(), "observed.yaml")
			writeDocs(t, observed, composedDocs(first))
			second := docs(t, claimRender(t, port, "xr.yaml", comp, "--observed-resources="+observed))
			want, got := composedDocs(first), composedDocs(second)
			delete(want, xfn.LegacyKind+"/auth-7xk2p")
			delete(got, xfn.LegacyKind+"/auth-7xk2p")
			if len(want) != 14 { // 11, and the agent's ServiceAccount, Role and RoleBinding
				t.Fatalf("%d composed resources rendered, want 14", len(want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("a reconcile with the first render as observed state changed the desired state (-first +second):\n%s", diff)
			}
		})
	}
	native, objects := configData(unwrapped(renders["native"])), configData(unwrapped(renders["objects"]))
	if len(native) != 2 {
		t.Fatalf("the native render has %d ConfigMaps, want 2", len(native))
	}
	if diff := cmp.Diff(native, objects); diff != "" {
		t.Errorf("named.conf and zone data differ between the native (-) and the Object-wrapped (+) render:\n%s", diff)
	}
	// Every composed resource of the wrapped render is an Object.
	for k := range composedDocs(renders["objects"]) {
		if !strings.HasPrefix(k, "Object/") && k != xfn.LegacyKind+"/auth-7xk2p" {
			t.Errorf("the wrapped render composed %s, not a provider-kubernetes Object", k)
		}
	}
}

// TestCrossplaneClaimNoNamespace: a cluster-scoped composite without a
// claim (and no spec.namespace) ends in the function's Fatal result, which
// crossplane render reports.
func TestCrossplaneClaimNoNamespace(t *testing.T) {
	port := startFunction(t, bindtools.Bin(t, "function-bind"))
	b, err := os.ReadFile(filepath.Join(claimDir(t), "xr.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var xr doc
	if err := yaml.Unmarshal(b, &xr); err != nil {
		t.Fatal(err)
	}
	delete(xr["spec"].(doc), "claimRef")
	y, _ := yaml.Marshal(xr)
	p := filepath.Join(t.TempDir(), "xr.yaml")
	if err := os.WriteFile(p, y, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := claimRenderErr(t, port, p, "composition.yaml")
	want := "spec.namespace: cannot render a cluster-scoped XLegacyBindCluster without a claim: there is no namespace to render into"
	if err == nil || !strings.Contains(stderr, want) {
		t.Errorf("crossplane render of a claimless legacy composite: err %v, stderr lacks %q:\n%s", err, want, stderr)
	}
}

// TestCrossplaneClaimExampleInStep: the composite in xr.yaml carries the
// claim's spec (Crossplane copies it), and names the claim.
func TestCrossplaneClaimExampleInStep(t *testing.T) {
	read := func(name string) doc {
		b, err := os.ReadFile(filepath.Join(claimDir(t), name))
		if err != nil {
			t.Fatal(err)
		}
		var d doc
		if err := yaml.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	claim, xr := read("claim.yaml"), read("xr.yaml")
	cs, xs := claim["spec"].(doc), xr["spec"].(doc)
	for _, f := range xfn.MachineryFields {
		delete(cs, f)
		delete(xs, f)
	}
	if diff := cmp.Diff(cs, xs); diff != "" {
		t.Errorf("xr.yaml's spec (+) is not claim.yaml's (-):\n%s", diff)
	}
	md := claim["metadata"].(doc)
	cr := read("xr.yaml")["spec"].(doc)["claimRef"].(doc)
	if cr["name"] != md["name"] || cr["namespace"] != md["namespace"] || cr["kind"] != xfn.ClaimKind {
		t.Errorf("xr.yaml's claimRef %v does not name claim.yaml's %v", cr, md)
	}
}

// TestCrossplaneClaimValidate: crossplane beta validate, offline, of both
// XRDs' resources: the rendered composites (native and wrapped, against
// the legacy XRD), the claim (against the claim CRD Crossplane derives),
// the v2 XBindCluster render, the wrapped Objects (against
// provider-kubernetes' Object CRD, a pinned copy in testdata), the
// required DNSRecords, the Compositions, and the function input (against
// package/function/input).
func TestCrossplaneClaimValidate(t *testing.T) {
	root := bindtools.RepoRoot(t)
	xp := bindtools.Bin(t, "crossplane")
	port := startFunction(t, bindtools.Bin(t, "function-bind"))

	dir, ext, cache := validateDirs(t, root)
	if err := os.WriteFile(filepath.Join(ext, "legacy-xrd.yaml"), mustRead(t, filepath.Join(root, "package", "configuration-claim", "xrd.yaml")), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFiles(t, ext, filepath.Join(root, "package", "function", "input", "fn.bind.unkin.net_inputs.yaml"),
		filepath.Join("testdata", "crossplane", "claim", "crds", "kubernetes.crossplane.io_objects.yaml"))

	var all bytes.Buffer
	add := func(b []byte) {
		if all.Len() > 0 {
			all.WriteString("\n---\n")
		}
		all.Write(b)
	}
	add(claimRender(t, port, "xr.yaml", "composition.yaml", "--include-full-xr"))
	add(claimRender(t, port, "xr.yaml", "composition-objects.yaml", "--include-full-xr"))
	add(crossplaneRender(t, port, "--include-full-xr"))
	for _, f := range []string{"claim.yaml", "required.yaml", "composition.yaml", "composition-objects.yaml"} {
		add(mustRead(t, filepath.Join(claimDir(t), f)))
	}
	// The function input, as an object of its own (it has no name in a
	// Composition).
	for _, w := range []string{"None", "ProviderKubernetes"} {
		add([]byte("apiVersion: fn.bind.unkin.net/v1alpha1\nkind: Input\nmetadata:\n  name: input-" + strings.ToLower(w) + "\nobjectWrapping: " + w + "\n"))
	}
	resources := filepath.Join(dir, "resources.yaml")
	if err := os.WriteFile(resources, all.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	betaValidate(t, xp, ext, resources, cache, []string{
		"[✓] xbind.unkin.net/v1alpha1, Kind=XLegacyBindCluster, auth-7xk2p validated successfully",
		"[✓] xbind.unkin.net/v1alpha1, Kind=BindClusterClaim, auth validated successfully",
		"[✓] xbind.unkin.net/v1alpha1, Kind=XBindCluster, auth validated successfully",
		"[✓] kubernetes.crossplane.io/v1alpha2, Kind=Object, auth-7xk2p-statefulset-auth validated successfully",
		"[✓] bind.unkin.net/v1alpha1, Kind=DNSRecord, status validated successfully",
		"[✓] apiextensions.crossplane.io/v1, Kind=Composition, xlegacybindclusters-objects.xbind.unkin.net validated successfully",
		"[✓] fn.bind.unkin.net/v1alpha1, Kind=Input, input-providerkubernetes validated successfully",
	})
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCrossplaneClaimPackage: the claim configuration package builds
// offline, and its Composition is the example's Object-wrapped one.
func TestCrossplaneClaimPackage(t *testing.T) {
	root := bindtools.RepoRoot(t)
	a := mustRead(t, filepath.Join(root, "package", "configuration-claim", "composition.yaml"))
	b := mustRead(t, filepath.Join(claimDir(t), "composition-objects.yaml"))
	if diff := cmp.Diff(string(b), string(a)); diff != "" {
		t.Errorf("package/configuration-claim/composition.yaml differs from examples/crossplane/claim/composition-objects.yaml:\n%s", diff)
	}
	cmd := exec.Command(bindtools.Bin(t, "crossplane"), "xpkg", "build", "--package-root=package/configuration-claim",
		"-o", filepath.Join(t.TempDir(), "configuration-bind-claim.xpkg"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("crossplane xpkg build: %v\n%s", err, out)
	}
}
