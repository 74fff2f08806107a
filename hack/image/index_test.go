package main

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// releaseArgs are the flags make release passes for one binary image: both
// architectures, {arch} in the binary's path, the OCI labels.
func releaseArgs(dir, out string) []string {
	return []string{
		"-arch", "amd64,arm64", "-bin", filepath.Join(dir, "{arch}", "fn"),
		"-entrypoint", "/fn", "-tag", "example.org/bind-fn/fn:v1.2.3", "-layout", out,
		"-label", "org.opencontainers.image.licenses=Apache-2.0",
		"-label", "org.opencontainers.image.source=https://example.org/bind-fn",
		"-label", "org.opencontainers.image.version=v1.2.3",
		"-label", "org.opencontainers.image.revision=0123abcd",
	}
}

// layoutFiles reads every file of an OCI layout directory.
func layoutFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestLayoutReproducible: the same binaries give the same OCI layout, byte
// for byte, so the index digest a release names is the one anyone gets who
// builds the same tree.
func TestLayoutReproducible(t *testing.T) {
	dir := t.TempDir()
	var outs []map[string][]byte
	var printed []string
	for i := range 2 {
		for _, a := range []string{"amd64", "arm64"} {
			if err := os.MkdirAll(filepath.Join(dir, a), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, a), "fn", "binary for "+a, 0o755)
		}
		out := filepath.Join(dir, "layout")
		var buf bytes.Buffer
		if err := run(releaseArgs(dir, out), &buf); err != nil {
			t.Fatalf("round %d: run: %v", i, err)
		}
		printed = append(printed, buf.String())
		outs = append(outs, layoutFiles(t, out))
	}
	if printed[0] != printed[1] {
		t.Errorf("index digest changed between identical builds: %q then %q", printed[0], printed[1])
	}
	if diff := cmp.Diff(outs[0], outs[1]); diff != "" {
		t.Errorf("layout changed between identical builds (-first +second):\n%s", diff)
	}
}

// TestLayoutIndex: the layout holds one OCI index named by the tag, with an
// image per architecture whose binary is that architecture's, every image
// carrying the labels and the index carrying them as annotations.
func TestLayoutIndex(t *testing.T) {
	dir := t.TempDir()
	for _, a := range []string{"amd64", "arm64"} {
		if err := os.MkdirAll(filepath.Join(dir, a), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, a), "fn", "binary for "+a, 0o755)
	}
	out := filepath.Join(dir, "layout")
	var buf bytes.Buffer
	if err := run(releaseArgs(dir, out), &buf); err != nil {
		t.Fatalf("run: %v", err)
	}
	p, err := layout.FromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	topm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(topm.Manifests) != 1 {
		t.Fatalf("index.json lists %d manifests, want the one image index", len(topm.Manifests))
	}
	d := topm.Manifests[0]
	if d.MediaType != types.OCIImageIndex || d.Annotations["org.opencontainers.image.ref.name"] != "example.org/bind-fn/fn:v1.2.3" {
		t.Errorf("index.json names %s %v, want an OCI image index named example.org/bind-fn/fn:v1.2.3", d.MediaType, d.Annotations)
	}
	if got := strings.Fields(buf.String()); len(got) != 3 || got[2] != d.Digest.String() {
		t.Errorf("run printed %q, want OUT TAG %s", buf.String(), d.Digest)
	}
	idx, err := top.ImageIndex(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.source":   "https://example.org/bind-fn",
		"org.opencontainers.image.version":  "v1.2.3",
		"org.opencontainers.image.revision": "0123abcd",
	}
	if diff := cmp.Diff(wantLabels, im.Annotations); diff != "" {
		t.Errorf("index annotations (-want +got):\n%s", diff)
	}
	var platforms []string
	for _, m := range im.Manifests {
		platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != m.Platform.Architecture {
			t.Errorf("manifest for %s holds a config for %s", m.Platform.Architecture, cf.Architecture)
		}
		if diff := cmp.Diff(wantLabels, cf.Config.Labels); diff != "" {
			t.Errorf("%s: config labels (-want +got):\n%s", m.Platform.Architecture, diff)
		}
		entries := layerEntries(t, img)
		if len(entries) != 1 || entries[0].Content != "binary for "+m.Platform.Architecture {
			t.Errorf("%s image holds %+v, want /fn with that architecture's binary", m.Platform.Architecture, entries)
		}
		if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
			t.Errorf("%s image is a %s, want an OCI manifest", m.Platform.Architecture, mt)
		}
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
}

// TestTree: -tree puts a directory's files into the image at their paths
// below it, executable bits kept; a symlink is refused.
func TestTree(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "amd64")
	if err := os.MkdirAll(filepath.Join(tree, "usr", "sbin"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tree, "usr", "sbin"), "named", "elf", 0o700)
	writeFile(t, tree, "lib.so", "so", 0o600)
	files, err := treeFiles(tree)
	if err != nil {
		t.Fatal(err)
	}
	want := []File{
		{Src: filepath.Join(tree, "lib.so"), Dst: "/lib.so", Mode: 0o644},
		{Src: filepath.Join(tree, "usr", "sbin", "named"), Dst: "/usr/sbin/named", Mode: 0o755},
	}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("treeFiles (-want +got):\n%s", diff)
	}
	if err := os.Symlink("lib.so", filepath.Join(tree, "link.so")); err != nil {
		t.Fatal(err)
	}
	if _, err := treeFiles(tree); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("treeFiles with a symlink: error = %v, want one saying it is not a regular file", err)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "fn", "binary", 0o755)
	cases := map[string]struct {
		reason string
		args   []string
		want   string
	}{
		"TarballTwoArchs": {
			reason: "a docker-archive tarball holds one image, not an index",
			args:   []string{"-bin", bin, "-tag", "example.org/fn:v1", "-o", filepath.Join(dir, "x.tar"), "-arch", "amd64,arm64"},
			want:   "a tarball holds one image",
		},
		"LabelTwice": {
			reason: "a label given twice would keep one value silently",
			args: []string{"-bin", bin, "-tag", "example.org/fn:v1", "-layout", filepath.Join(dir, "l"),
				"-label", "a=1", "-label", "a=2"},
			want: "already set",
		},
		"LabelNoValue": {
			reason: "a label is KEY=VALUE",
			args:   []string{"-bin", bin, "-tag", "example.org/fn:v1", "-layout", filepath.Join(dir, "l"), "-label", "a"},
			want:   "want KEY=VALUE",
		},
		"ArchTwice": {
			reason: "an index holds one image per platform",
			args:   []string{"-bin", bin, "-tag", "example.org/fn:v1", "-layout", filepath.Join(dir, "l"), "-arch", "arm64,arm64"},
			want:   "given twice",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := run(tc.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nrun(...) error = %v, want one containing %q", tc.reason, err, tc.want)
			}
		})
	}
}

// TestFromTarballs: -from puts existing single-image tarballs (the
// per-architecture xpkgs) into one index, labels added to each config and
// nothing else of the image changed.
func TestFromTarballs(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "fn", "binary", 0o755)
	var args []string
	for _, a := range []string{"amd64", "arm64"} {
		out := filepath.Join(dir, a+".tar")
		if _, err := Write(Options{Files: []File{{Src: bin, Dst: "/fn", Mode: 0o755}}, Entrypoint: []string{"/fn"}, Arch: a,
			Labels: map[string]string{"io.crossplane.xpkg": "base"}}, "example.org/fn:v1", out); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-from", out)
	}
	out := filepath.Join(dir, "layout")
	args = append(args, "-layout", out, "-tag", "example.org/fn:v1", "-label", "org.opencontainers.image.version=v1")
	if err := run(args, io.Discard); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	top, _ := p.ImageIndex()
	topm, _ := top.IndexManifest()
	idx, err := top.ImageIndex(topm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	var got []string
	for _, m := range im.Manifests {
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		got = append(got, m.Platform.Architecture+" "+cf.Config.Labels["io.crossplane.xpkg"]+" "+cf.Config.Labels["org.opencontainers.image.version"])
	}
	if diff := cmp.Diff([]string{"amd64 base v1", "arm64 base v1"}, got); diff != "" {
		t.Errorf("index of tarballs (-want +got):\n%s", diff)
	}
}
