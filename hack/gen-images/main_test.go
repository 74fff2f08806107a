package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestCheckRef(t *testing.T) {
	cases := map[string]struct {
		reason string
		ref    string
		ok     bool
	}{
		"Tag":          {reason: "between releases an image is named by tag", ref: "example.org/bind-fn/fn-render:v0.1.0", ok: true},
		"TagAndDigest": {reason: "a release names tag and digest", ref: "example.org/bind-fn/fn-render:v0.1.0@" + digest, ok: true},
		"NoTag":        {reason: "a release's list says which version it is", ref: "example.org/bind-fn/fn-render"},
		"DigestOnly":   {reason: "a digest alone does not say which version it is", ref: "example.org/bind-fn/fn-render@" + digest},
		"ShortDigest":  {reason: "a digest is 64 hex digits", ref: "example.org/bind-fn/fn-render:v1@sha256:0123"},
		"OtherAlgo":    {reason: "the registry speaks sha256", ref: "example.org/bind-fn/fn-render:v1@md5:0123456789abcdef0123456789abcdef"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckRef(tc.ref)
			if (err == nil) != tc.ok {
				t.Errorf("%s\nCheckRef(%q) = %v, want ok=%v", tc.reason, tc.ref, err, tc.ok)
			}
		})
	}
}

func TestRewrite(t *testing.T) {
	r := &Release{Images: map[string]string{
		"bind9":         "example.org/b/bind9:9.20@" + digest,
		"bind-fn-agent": "example.org/b/bind-fn-agent:v2@" + digest,
		"fn-render":     "example.org/b/fn-render:v2@" + digest,
		"fn-validate":   "example.org/b/fn-validate:v2@" + digest,
		"function-bind": "example.org/b/function-bind:v2@" + digest,
	}}
	src := `pipeline:
  validators:
    - image: example.org/b/fn-validate:v0.1.0
  mutators:
    - image: example.org/b/fn-render:v0.1.0@sha256:aaaa
    - image: other.org/fn:v1
# image: example.org/b/fn-render:v0.1.0 is in a comment with words after it
spec:
  package: example.org/b/function-bind:v0.1.0
`
	want := `pipeline:
  validators:
    - image: example.org/b/fn-validate:v2@` + digest + `
  mutators:
    - image: example.org/b/fn-render:v2@` + digest + `
    - image: other.org/fn:v1
# image: example.org/b/fn-render:v0.1.0 is in a comment with words after it
spec:
  package: example.org/b/function-bind:v2@` + digest + `
`
	got, hit := Rewrite([]byte(src), r)
	if !hit {
		t.Error("Rewrite found none of the release's images")
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Rewrite (-want +got):\n%s", diff)
	}
}

// TestGeneratedUpToDate: the tree holds what gen-images writes from
// release/images.yaml (make check-generate runs the same check on the
// whole tree).
func TestGeneratedUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	tmp := t.TempDir()
	files, err := Targets(root)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "internal", "model", "images_gen.go"))
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tmp, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := generate(filepath.Join(root, "release", "images.yaml"), tmp); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		want, _ := os.ReadFile(f)
		got, _ := os.ReadFile(filepath.Join(tmp, rel))
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s is stale: run make generate (-tree +generated):\n%s", rel, diff)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	full := "images:\n  bind9: e.org/bind9:1\n  bind-fn-agent: e.org/a:1\n  fn-render: e.org/r:1\n  fn-validate: e.org/v:1\n  function-bind: e.org/f:1\n"
	cases := map[string]struct {
		reason, yaml, want string
	}{
		"Missing":  {reason: "every image of the product is listed", yaml: "images:\n  bind9: e.org/bind9:1\n", want: "images.bind-fn-agent is missing"},
		"Unknown":  {reason: "a misspelt name would pin nothing", yaml: full + "  fn-rendr: e.org/r:1\n", want: "images.fn-rendr: unknown image"},
		"BadRef":   {reason: "a malformed digest is located", yaml: strings.Replace(full, "e.org/r:1", "e.org/r:1@sha256:zz", 1), want: "images.fn-render"},
		"BadField": {reason: "unknown fields are rejected", yaml: full + "extra: 1\n", want: "unknown field"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(dir, name+".yaml")
			if err := os.WriteFile(f, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nLoad error = %v, want one containing %q", tc.reason, err, tc.want)
			}
		})
	}
}
