package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/pkgdir"
)

// TestKustomizeSaysWhatItCannotKeep: under the real kustomize (no previous
// output is ever fed back) a build that makes key material and starts
// serials at 1 says so on stderr, once, with the fix; kustomize shows a
// function's stderr and never its results. A build of a package rendered
// before (its output among the resources: the documented fix) keeps the
// keys and serials and says nothing.
func TestKustomizeSaysWhatItCannotKeep(t *testing.T) {
	kustomize := bindtools.Bin(t, "kustomize")
	fnRender := bindtools.Bin(t, "fn-render")
	bindfn := bindtools.Bin(t, "bind-fn")
	root := bindtools.RepoRoot(t)
	build := func(t *testing.T, dir string) (stdout []byte, stderr string) {
		t.Helper()
		cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
		var e bytes.Buffer
		cmd.Stderr = &e
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kustomize build %s: %v\n%s", dir, err, e.String())
		}
		return out, e.String()
	}
	const notice = "bind-fn: warning: kustomize passes no previous output to bind-fn"

	t.Run("no previous output", func(t *testing.T) {
		_, stderr := build(t, filepath.Join(root, "examples", "kustomize", "authoritative"))
		if n := strings.Count(stderr, notice); n != 1 {
			t.Fatalf("stderr has the notice %d times, want once:\n%s", n, stderr)
		}
		for _, want := range []string{"(5 Secrets)", "started 6 zone serials at 1", "spec.importExisting", "spec.soa.serial", "render with kpt or bind-fn render"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("the notice does not say %q:\n%s", want, stderr)
			}
		}
	})

	t.Run("rendered package", func(t *testing.T) {
		dir := pkgdir.CopyTemp(t, filepath.Join(root, "examples", "authoritative"))
		pkgdir.MustRun(t, bindfn, "render", dir)
		var resources []string
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") || filepath.Base(p) == "kustomization.yaml" {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			resources = append(resources, rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(resources)
		rel, err := filepath.Rel(dir, fnRender)
		if err != nil {
			t.Fatal(err)
		}
		kust := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ntransformers: [fn-render.yaml]\nresources:\n  - " + strings.Join(resources, "\n  - ") + "\n"
		cfg := "apiVersion: fn.bind.unkin.net/v1alpha1\nkind: RenderConfig\nmetadata:\n  name: fn-render\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + rel + "\n"
		for f, s := range map[string]string{"kustomization.yaml": kust, "fn-render.yaml": cfg} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, stderr := build(t, dir)
		if strings.Contains(stderr, notice) {
			t.Errorf("a build with the previous output warned that it has none:\n%s", stderr)
		}
		// The keys are the rendered package's.
		secret, err := os.ReadFile(filepath.Join(dir, "rendered", "auth", "secret_transfer-key-tsig.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var material string
		for _, l := range strings.Split(string(secret), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "secret: ") {
				material = strings.TrimSpace(l)
			}
		}
		if material == "" || !bytes.Contains(out, []byte(material)) {
			t.Errorf("the build did not keep the rendered key material %q", material)
		}
	})
}
