package test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

// crossplaneVersion is the crossplane CLI bin/crossplane is built from
// (tools/crossplane/go.mod); beta validate's cache is seeded with its CRDs.
const crossplaneVersion = "v2.1.0"

// startFunction runs a function-bind binary on a free loopback port
// (--insecure, as crossplane render's Development runtime expects) and
// kills it by PID when the test ends.
func startFunction(t *testing.T, bin string) int {
	t.Helper()
	port := bindtools.FreePort(t)
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--insecure", fmt.Sprintf("--address=127.0.0.1:%d", port))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("function-bind log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(bindtools.Hang)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			t.Fatalf("function-bind did not listen on 127.0.0.1:%d: %v\n%s", port, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// crossplaneRender runs `crossplane render` on examples/crossplane against
// the function on port.
func crossplaneRender(t *testing.T, port int, extra ...string) []byte {
	t.Helper()
	ex := filepath.Join(bindtools.RepoRoot(t), "examples", "crossplane")
	out, stderr, err := renderRun(t, port, ex, "xr.yaml", "composition.yaml", filepath.Join(ex, "functions.yaml"), extra...)
	if err != nil {
		t.Fatalf("crossplane render of %s: %v\n%s", ex, err, stderr)
	}
	return out
}

// renderRun is the one `crossplane render` runner: the composite xr and the
// composition (relative to dir unless absolute), the functions file, the
// required resources dir/required.yaml, the function on port (the
// Development runtime), the hang bound as crossplane's own timeout.
func renderRun(t *testing.T, port int, dir, xr, composition, functions string, extra ...string) ([]byte, string, error) {
	t.Helper()
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	args := append([]string{"render", abs(xr), abs(composition), functions,
		"-a", fmt.Sprintf("render.crossplane.io/runtime-development-target=127.0.0.1:%d", port),
		"--required-resources=" + filepath.Join(dir, "required.yaml"),
		"--timeout=" + bindtools.Hang.String(),
	}, extra...)
	cmd := exec.Command(bindtools.Bin(t, "crossplane"), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return out, stderr.String(), err
}

type doc = map[string]any

func docs(t *testing.T, out []byte) []doc {
	t.Helper()
	var ds []doc
	for _, d := range bytes.Split(out, []byte("\n---\n")) {
		d = bytes.TrimPrefix(bytes.TrimSpace(d), []byte("---"))
		if len(bytes.TrimSpace(d)) == 0 {
			continue
		}
		var m doc
		if err := yaml.Unmarshal(d, &m); err != nil {
			t.Fatalf("cannot parse output document: %v\n%s", err, d)
		}
		ds = append(ds, m)
	}
	return ds
}

func kindName(d doc) (string, string) {
	k, _ := d["kind"].(string)
	md, _ := d["metadata"].(doc)
	n, _ := md["name"].(string)
	return k, n
}

// composedDocs are the rendered composed resources by kind/name.
func composedDocs(ds []doc) map[string]doc {
	out := map[string]doc{}
	for _, d := range ds {
		k, n := kindName(d)
		if k == "XBindCluster" || k == "Result" {
			continue
		}
		out[k+"/"+n] = d
	}
	return out
}

// redacted replaces key material in Secrets (fresh on every first render)
// so the rest can be compared with a golden file.
func redacted(t *testing.T, ds []doc) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, d := range ds {
		if k, n := kindName(d); k == "ConfigMap" && strings.HasSuffix(n, "-dnssec-ds") {
			if data, ok := d["data"].(doc); ok {
				data["trust-anchors.conf"] = "REDACTED" // fresh keys; YAML may fold its line
			}
		}
		if k, _ := kindName(d); k == "Secret" {
			if data, ok := d["data"].(doc); ok {
				for key := range data {
					if key == "secret" || key == "key.conf" || key == "rndc.key" || strings.HasSuffix(key, ".conf") ||
						strings.HasSuffix(key, ".key") || strings.HasSuffix(key, ".private") || strings.HasSuffix(key, ".state") {
						data[key] = "REDACTED"
					}
				}
			}
		}
		y, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return redactDNSSEC(b.Bytes())
}

// DNSSEC keys are fresh on every first render too: their tags (in Secret
// key names, DS records and the key record) and DS digests are redacted.
var dnssecRandom = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(K[a-z0-9.-]+\._\d{3})_\d{5}(\.(key|private|state))`), "${1}_TAG$2"},
	{regexp.MustCompile(`IN DS \d+ (\d+) 2 [0-9A-F]{64}`), "IN DS TAG $1 2 DIGEST"},
	{regexp.MustCompile(`"(\d+/25[67])/\d+"`), `"$1/TAG"`},
}

func redactDNSSEC(b []byte) []byte {
	for _, r := range dnssecRandom {
		b = r.re.ReplaceAll(b, []byte(r.repl))
	}
	return b
}

func writeDocs(t *testing.T, path string, ds map[string]doc) {
	t.Helper()
	keys := slices.Sorted(maps.Keys(ds))
	var b bytes.Buffer
	for _, k := range keys {
		y, err := yaml.Marshal(ds[k])
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCrossplaneRender: the real crossplane render on examples/crossplane
// against golden output; a second render fed the first one's composed
// resources as observed state gives an identical desired state (same TSIG
// material, same serials).
func TestCrossplaneRender(t *testing.T) {
	port := startFunction(t, bindtools.Bin(t, "function-bind"))
	first := docs(t, crossplaneRender(t, port, "--include-function-results"))
	golden.Check(t, filepath.Join("testdata", "crossplane", "render.yaml"), redacted(t, docs(t, crossplaneRender(t, port, "--include-function-results"))))

	observed := filepath.Join(t.TempDir(), "observed.yaml")
	writeDocs(t, observed, composedDocs(first))
	second := docs(t, crossplaneRender(t, port, "--observed-resources="+observed))
	want, got := composedDocs(first), composedDocs(second)
	if len(want) < 10 {
		t.Fatalf("only %d composed resources rendered", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a reconcile with the first render as observed state changed the desired state (-first +second):\n%s", diff)
	}
	// Every object exists now: everything but the StatefulSet (no pods
	// observed) is ready.
	for _, d := range second {
		if k, _ := kindName(d); k != "XBindCluster" {
			continue
		}
		st, _ := d["status"].(doc)
		bind, _ := st["bind"].(doc)
		if got, want := bind["readyObjects"], float64(len(want)-1); got != want {
			t.Errorf("status.bind.readyObjects = %v, want %v", got, want)
		}
	}
}

// TestCrossplaneValidate: crossplane beta validate, offline, of the
// rendered XR (against the generated XRD), the required DNSRecords
// (against the CRDs) and the Composition (against Crossplane's own CRDs,
// seeded into the cache from the crossplane module the CLI is built from).
func TestCrossplaneValidate(t *testing.T) {
	root := bindtools.RepoRoot(t)
	xp := bindtools.Bin(t, "crossplane")
	port := startFunction(t, bindtools.Bin(t, "function-bind"))
	rendered := crossplaneRender(t, port, "--include-full-xr")

	dir, ext, cache := validateDirs(t, root)

	resources := filepath.Join(dir, "resources.yaml")
	var all bytes.Buffer
	all.Write(rendered)
	for _, f := range []string{"required.yaml", "composition.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, "examples", "crossplane", f))
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString("\n---\n")
		all.Write(b)
	}
	if err := os.WriteFile(resources, all.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	betaValidate(t, xp, ext, resources, cache, []string{
		"[✓] xbind.unkin.net/v1alpha1, Kind=XBindCluster, auth validated successfully",
		"[✓] bind.unkin.net/v1alpha1, Kind=DNSRecord, shop validated successfully",
		"[✓] apiextensions.crossplane.io/v1, Kind=Composition, xbindclusters.xbind.unkin.net validated successfully",
	})
}

// validateDirs prepares an offline `crossplane beta validate`: a temp dir,
// its extensions dir holding the v2 XRD and the CRDs, and a cache dir seeded
// with Crossplane's own CRDs from the crossplane module the CLI is built from.
func validateDirs(t *testing.T, root string) (dir, ext, cache string) {
	t.Helper()
	dir = t.TempDir()
	ext = filepath.Join(dir, "extensions")
	cache = filepath.Join(dir, "cache")
	seed := filepath.Join(cache, "xpkg.crossplane.io", "crossplane", "crossplane@"+crossplaneVersion)
	for _, d := range []string{ext, seed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFiles(t, ext, filepath.Join(root, "package", "configuration", "xrd.yaml"))
	crds, _ := filepath.Glob(filepath.Join(root, "config", "crd", "*.yaml"))
	copyFiles(t, ext, crds...)
	modDir := goModDir(t, filepath.Join(root, "tools", "crossplane"), "github.com/crossplane/crossplane/v2")
	core, _ := filepath.Glob(filepath.Join(modDir, "cluster", "crds", "*.yaml"))
	if len(core) == 0 {
		t.Fatalf("no Crossplane CRDs under %s/cluster/crds", modDir)
	}
	copyFiles(t, seed, core...)
	return dir, ext, cache
}

// betaValidate runs `crossplane beta validate` offline (the seeded cache
// dir) of resources against the schemas in ext, and requires every line of
// want, no failure and no download.
func betaValidate(t *testing.T, xp, ext, resources, cache string, want []string) {
	t.Helper()
	cmd := exec.Command(xp, "beta", "validate", ext, resources, "--cache-dir="+cache,
		"--crossplane-image=xpkg.crossplane.io/crossplane/crossplane:"+crossplaneVersion)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("crossplane beta validate: %v\n%s", err, out)
	}
	text := string(out)
	for _, w := range append(want, " 0 failure cases") {
		if !strings.Contains(text, w) {
			t.Errorf("crossplane beta validate output lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "downloading") {
		t.Errorf("crossplane beta validate went to the network:\n%s", text)
	}
}

func copyFiles(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goModDir is the module cache directory of mod as required by the module
// in dir (offline: the module is already there when bin/crossplane is).
func goModDir(t *testing.T, dir, mod string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := cmd.Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("go list -m %s in %s: %v (run make tools)", mod, dir, err)
	}
	return string(bytes.TrimSpace(out))
}

// configData is the data of the ConfigMaps that carry BIND's files (the
// config and zone shards), by ConfigMap name and key.
func configData(ds []doc) map[string]any {
	out := map[string]any{}
	for _, d := range ds {
		k, n := kindName(d)
		// The DS records come from each render's fresh DNSSEC keys.
		if k != "ConfigMap" || strings.HasSuffix(n, "-dnssec-ds") {
			continue
		}
		out[n] = d["data"]
	}
	return out
}

// TestCrossplaneMatchesFnRender: for the same spec, the named.conf and
// zone files composed through Crossplane (examples/crossplane, with two
// records as required resources) are byte-identical to what fn-render
// makes of examples/authoritative through kustomize.
func TestCrossplaneMatchesFnRender(t *testing.T) {
	root := bindtools.RepoRoot(t)
	bindtools.Bin(t, "fn-render")
	kustomize := bindtools.Bin(t, "kustomize")
	port := startFunction(t, bindtools.Bin(t, "function-bind"))
	xp := configData(docs(t, crossplaneRender(t, port)))

	cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join(root, "examples", "kustomize", "authoritative"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, stderr.String())
	}
	krm := configData(docs(t, out))
	if len(krm) < 2 {
		t.Fatalf("fn-render made %d ConfigMaps", len(krm))
	}
	if diff := cmp.Diff(krm, xp); diff != "" {
		t.Errorf("BIND files differ between fn-render (-) and crossplane render (+):\n%s", diff)
	}
}

// TestCrossplanePackage: make xpkg's recipe builds the package offline, and
// the function binary taken out of the package's embedded runtime image
// serves crossplane render.
func TestCrossplanePackage(t *testing.T) {
	root := bindtools.RepoRoot(t)
	xp := bindtools.Bin(t, "crossplane")
	fnBin := bindtools.Bin(t, "function-bind")
	dir := t.TempDir()
	img := filepath.Join(dir, "function-bind.tar")
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run("go", "run", "./hack/image", "-bin", fnBin, "-path-in-image", "/function-bind", "-entrypoint", "/function-bind",
		"-tag", "git.unkin.net/unkin/bind-fn/function-bind:test", "-o", img)
	pkg := filepath.Join(dir, "function-bind.xpkg")
	run(xp, "xpkg", "build", "--package-root=package/function", "--embed-runtime-image-tarball="+img, "-o", pkg)
	run(xp, "xpkg", "build", "--package-root=package/configuration", "-o", filepath.Join(dir, "configuration-bind.xpkg"))

	// The xpkg is an image: its layers are the package (package.yaml) and
	// the runtime image's layers; take the binary out of them.
	im, err := tarball.ImageFromPath(pkg, nil)
	if err != nil {
		t.Fatalf("cannot read %s as an image: %v", pkg, err)
	}
	layers, err := im.Layers()
	if err != nil {
		t.Fatal(err)
	}
	extracted := filepath.Join(dir, "function-bind")
	var sawPackageYAML bool
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			switch strings.TrimPrefix(h.Name, "/") {
			case "package.yaml":
				b, _ := io.ReadAll(tr)
				sawPackageYAML = bytes.Contains(b, []byte("kind: Function"))
			case "function-bind":
				f, err := os.OpenFile(extracted, os.O_CREATE|os.O_WRONLY, 0o755)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.Copy(f, tr); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
		}
		rc.Close()
	}
	if !sawPackageYAML {
		t.Error("the xpkg has no package.yaml declaring a Function")
	}
	if _, err := os.Stat(extracted); err != nil {
		t.Fatalf("no /function-bind in the package's runtime image: %v", err)
	}
	port := startFunction(t, extracted)
	ds := docs(t, crossplaneRender(t, port))
	if n := len(composedDocs(ds)); n < 10 {
		t.Errorf("the packaged function composed %d resources", n)
	}
}

// TestCrossplaneCompositionCopies: the Composition of the configuration
// package and of the example are one file.
func TestCrossplaneCompositionCopies(t *testing.T) {
	root := bindtools.RepoRoot(t)
	a, errA := os.ReadFile(filepath.Join(root, "package", "configuration", "composition.yaml"))
	b, errB := os.ReadFile(filepath.Join(root, "examples", "crossplane", "composition.yaml"))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if diff := cmp.Diff(string(b), string(a)); diff != "" {
		t.Errorf("package/configuration/composition.yaml differs from examples/crossplane/composition.yaml:\n%s", diff)
	}
}
