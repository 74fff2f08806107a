package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// writeFile writes a file with mode under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	// Make the on-disk times differ between calls: they must not leak into the image.
	now := time.Now()
	if err := os.Chtimes(p, now, now); err != nil {
		t.Fatal(err)
	}
	return p
}

type layerEntry struct {
	Name    string
	Type    byte
	Mode    int64
	UID     int
	GID     int
	ModTime int64
	Content string
}

// layerEntries lists the single layer of img.
func layerEntries(t *testing.T, img v1.Image) []layerEntry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("image has %d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var got []layerEntry
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, layerEntry{h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.ModTime.Unix(), string(b)})
	}
	return got
}

func TestBuildReproducible(t *testing.T) {
	dir := t.TempDir()
	var digests []v1.Hash
	var tarballs [][]byte
	for i := range 2 {
		// Fresh files each round, with new mtimes.
		bin := writeFile(t, dir, "agent", "#!fake static binary\n", 0o700)
		out := filepath.Join(dir, "img.tar")
		d, err := Write(Options{
			Files:      []File{{Src: bin, Dst: "/bind-fn-agent", Mode: 0o755}},
			Entrypoint: []string{"/bind-fn-agent"},
			Cmd:        []string{"copy-self", "/bind-fn/bin/bind-fn-agent"},
			Arch:       "amd64",
			Epoch:      time.Unix(0, 0),
		}, "example.org/bind-fn/agent:test", out)
		if err != nil {
			t.Fatalf("round %d: Write: %v", i, err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
		tarballs = append(tarballs, b)
		time.Sleep(1100 * time.Millisecond) // a clock that leaks would now differ
	}
	if digests[0] != digests[1] {
		t.Errorf("digest changed between identical builds: %s then %s", digests[0], digests[1])
	}
	if !bytes.Equal(tarballs[0], tarballs[1]) {
		t.Errorf("tarball bytes changed between identical builds")
	}
}

func TestTarballContents(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "fn", "binary", 0o644) // the image sets 0755 whatever the disk says
	extra := writeFile(t, dir, "notice.txt", "hello", 0o600)
	out := filepath.Join(dir, "fn.tar")
	if err := run([]string{
		"-bin", bin, "-path-in-image", "/bind-fn-agent",
		"-entrypoint", "/bind-fn-agent", "-cmd", "copy-self /bind-fn/bin/bind-fn-agent",
		"-tag", "example.org/bind-fn/agent:test", "-o", out,
		"-extra-file", extra + ":/usr/share/doc/bind-fn/NOTICE",
	}, io.Discard); err != nil {
		t.Fatalf("run: %v", err)
	}
	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatalf("cannot read back %s: %v", out, err)
	}

	want := []layerEntry{
		{Name: "bind-fn-agent", Type: tar.TypeReg, Mode: 0o755, Content: "binary"},
		{Name: "usr/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "usr/share/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "usr/share/doc/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "usr/share/doc/bind-fn/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "usr/share/doc/bind-fn/NOTICE", Type: tar.TypeReg, Mode: 0o644, Content: "hello"},
	}
	if diff := cmp.Diff(want, layerEntries(t, img)); diff != "" {
		t.Errorf("layer entries (-want +got):\n%s", diff)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	type cfg struct {
		Entrypoint, Cmd []string
		User, OS        string
		Created         int64
	}
	wantCfg := cfg{
		Entrypoint: []string{"/bind-fn-agent"},
		Cmd:        []string{"copy-self", "/bind-fn/bin/bind-fn-agent"},
		User:       "65532:65532",
		OS:         "linux",
	}
	gotCfg := cfg{cf.Config.Entrypoint, cf.Config.Cmd, cf.Config.User, cf.OS, cf.Created.Unix()}
	if diff := cmp.Diff(wantCfg, gotCfg); diff != "" {
		t.Errorf("image config (-want +got):\n%s", diff)
	}
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "fn", "binary", 0o755)
	cases := map[string]struct {
		reason string
		opts   Options
		want   string
	}{
		"NoEntrypoint": {
			reason: "an image without an entrypoint cannot run",
			opts:   Options{Files: []File{{Src: bin, Dst: "/fn", Mode: 0o755}}},
			want:   "no entrypoint",
		},
		"RelativePath": {
			reason: "paths in the image must be absolute",
			opts:   Options{Files: []File{{Src: bin, Dst: "fn", Mode: 0o755}}, Entrypoint: []string{"/fn"}},
			want:   "must be an absolute file path",
		},
		"Duplicate": {
			reason: "two files at one path would silently shadow each other",
			opts: Options{Files: []File{{Src: bin, Dst: "/fn", Mode: 0o755}, {Src: bin, Dst: "/fn", Mode: 0o755}},
				Entrypoint: []string{"/fn"}},
			want: "already in the image",
		},
		"FileAndDir": {
			reason: "a path cannot be a file and a directory",
			opts: Options{Files: []File{{Src: bin, Dst: "/a", Mode: 0o755}, {Src: bin, Dst: "/a/b", Mode: 0o755}},
				Entrypoint: []string{"/a"}},
			want: "both a file and a directory",
		},
		"MissingSource": {
			reason: "a missing binary is reported, not packaged empty",
			opts:   Options{Files: []File{{Src: filepath.Join(dir, "nope"), Dst: "/fn", Mode: 0o755}}, Entrypoint: []string{"/fn"}},
			want:   "no such file",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Build(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nBuild(...) error = %v, want one containing %q", tc.reason, err, tc.want)
			}
		})
	}
}
