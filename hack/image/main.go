// Command image builds a single-layer container image tarball without a
// Docker engine: an empty base, one layer holding a static binary (and any
// extra files), an entrypoint, and the distroless nonroot user 65532:65532.
//
// The result is reproducible: every timestamp is fixed (SOURCE_DATE_EPOCH,
// else the Unix epoch), tar entries are sorted and carry no owner names, and
// the layer is compressed deterministically, so the same inputs always give
// the same image digest. The tarball is what `docker load`, `kind load
// image-archive` and `crossplane xpkg build --embed-runtime-image-tarball`
// read.
//
//	go run ./hack/image -bin bin/fn-render -path-in-image /fn-render \
//	    -entrypoint /fn-render -tag example.org/bind-fn/fn-render:dev -o out/images/fn-render.tar
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRootUser is distroless's nonroot user and group.
const NonRootUser = "65532:65532"

// File is one regular file placed in the image.
type File struct {
	// Src is the file on disk.
	Src string
	// Dst is the absolute path in the image.
	Dst string
	// Mode is the file mode in the image (permission bits only).
	Mode int64
}

// Options describe one image.
type Options struct {
	// Files are the files of the single layer; the binary is one of them.
	Files []File
	// Entrypoint and Cmd of the image config.
	Entrypoint []string
	Cmd        []string
	// User is the image user, NonRootUser unless set.
	User string
	// Env of the image config, KEY=VALUE.
	Env []string
	// OS and Arch of the image; linux and runtime.GOARCH unless set.
	OS, Arch string
	// Epoch is every timestamp in the image.
	Epoch time.Time
	// OCI selects OCI media types instead of Docker schema 2.
	OCI bool
	// Labels of the image config (org.opencontainers.image.*).
	Labels map[string]string
}

// Build assembles the image.
func Build(o Options) (v1.Image, error) {
	if len(o.Files) == 0 {
		return nil, errors.New("cannot build image: no files")
	}
	if len(o.Entrypoint) == 0 {
		return nil, errors.New("cannot build image: no entrypoint")
	}
	layerTar, err := layerBytes(o.Files, o.Epoch)
	if err != nil {
		return nil, err
	}
	layerMT := types.DockerLayer
	if o.OCI {
		layerMT = types.OCILayer
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(layerMT))
	if err != nil {
		return nil, fmt.Errorf("cannot create layer: %w", err)
	}

	created := v1.Time{Time: o.Epoch.UTC()}
	img, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   created,
			CreatedBy: "bind-fn hack/image",
			Comment:   "static binary",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("cannot append layer: %w", err)
	}
	if o.OCI {
		img = mutate.MediaType(img, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("cannot read config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS = orDefault(o.OS, "linux")
	cf.Architecture = orDefault(o.Arch, runtime.GOARCH)
	cf.Created = created
	cf.Config.Entrypoint = o.Entrypoint
	cf.Config.Cmd = o.Cmd
	cf.Config.User = orDefault(o.User, NonRootUser)
	cf.Config.Env = o.Env
	cf.Config.WorkingDir = "/"
	if len(o.Labels) > 0 {
		cf.Config.Labels = maps.Clone(o.Labels)
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("cannot set config: %w", err)
	}
	return img, nil
}

// layerBytes writes an uncompressed tar of files plus their parent
// directories, sorted by path, owned by root, every time set to epoch.
func layerBytes(files []File, epoch time.Time) ([]byte, error) {
	type entry struct {
		hdr *tar.Header
		src string
	}
	entries := map[string]entry{}
	for _, f := range files {
		dst := path.Clean("/" + f.Dst)
		if dst == "/" || !strings.HasPrefix(f.Dst, "/") {
			return nil, fmt.Errorf("cannot place %q: path in image %q must be an absolute file path", f.Src, f.Dst)
		}
		rel := strings.TrimPrefix(dst, "/")
		if _, dup := entries[rel]; dup {
			return nil, fmt.Errorf("cannot place %q: %q is already in the image", f.Src, f.Dst)
		}
		fi, err := os.Stat(f.Src)
		if err != nil {
			return nil, fmt.Errorf("cannot read file for the image: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("cannot place %q: not a regular file", f.Src)
		}
		entries[rel] = entry{src: f.Src, hdr: &tar.Header{
			Typeflag: tar.TypeReg, Name: rel, Mode: f.Mode, Size: fi.Size(),
		}}
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			if e, ok := entries[d+"/"]; ok && e.hdr.Typeflag == tar.TypeDir {
				continue
			}
			entries[d+"/"] = entry{hdr: &tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755}}
		}
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		if _, clash := entries[strings.TrimSuffix(n, "/")]; clash && strings.HasSuffix(n, "/") {
			return nil, fmt.Errorf("cannot place files: %q is both a file and a directory", "/"+strings.TrimSuffix(n, "/"))
		}
		names = append(names, n)
	}
	sort.Strings(names)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := entries[n]
		h := e.hdr
		h.ModTime, h.AccessTime, h.ChangeTime = epoch.UTC(), time.Time{}, time.Time{}
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("cannot write layer: %w", err)
		}
		if e.src == "" {
			continue
		}
		data, err := os.ReadFile(e.src)
		if err != nil {
			return nil, fmt.Errorf("cannot read file for the image: %w", err)
		}
		if int64(len(data)) != h.Size {
			return nil, fmt.Errorf("cannot place %q: it changed while the image was built", e.src)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("cannot write layer: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("cannot write layer: %w", err)
	}
	return buf.Bytes(), nil
}

// Write builds the image and writes it as a tarball tagged tag.
func Write(o Options, tag, out string) (v1.Hash, error) {
	ref, err := name.NewTag(tag)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("cannot parse -tag %q: %w", tag, err)
	}
	img, err := Build(o)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := os.MkdirAll(path.Dir(out), 0o755); err != nil {
		return v1.Hash{}, err
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return v1.Hash{}, fmt.Errorf("cannot write %s: %w", out, err)
	}
	return img.Digest()
}

// epochFromEnv reads SOURCE_DATE_EPOCH, the reproducible-builds convention.
func epochFromEnv() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot parse SOURCE_DATE_EPOCH %q: want Unix seconds", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

// parseExtra parses "SRC:DST"; the last colon splits, so DST may not hold
// one. The file keeps its executable bit (0755) or is 0644.
func parseExtra(s string) (File, error) {
	i := strings.LastIndex(s, ":")
	if i <= 0 || i == len(s)-1 {
		return File{}, fmt.Errorf("cannot parse -extra-file %q: want SRC:DST", s)
	}
	src, dst := s[:i], s[i+1:]
	fi, err := os.Stat(src)
	if err != nil {
		return File{}, fmt.Errorf("cannot use -extra-file %q: %w", s, err)
	}
	mode := int64(0o644)
	if fi.Mode().Perm()&0o111 != 0 {
		mode = 0o755
	}
	return File{Src: src, Dst: dst, Mode: mode}, nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	var (
		bin        = fs.String("bin", "", "static binary to put in the image; {arch} stands for each -arch (-bin or -tree required)")
		pathInImg  = fs.String("path-in-image", "", "absolute path of the binary in the image (default /<basename of -bin>)")
		entrypoint = fs.String("entrypoint", "", "entrypoint, words split on spaces (default the binary's path)")
		cmd        = fs.String("cmd", "", "default arguments (image Cmd), words split on spaces")
		tag        = fs.String("tag", "", "image reference written into the tarball or layout, e.g. registry/repo:tag (required)")
		out        = fs.String("o", "", "output tarball (docker load, ctr import; one -arch only)")
		layoutDir  = fs.String("layout", "", "output OCI image layout directory: one image index, a manifest per -arch (replaced if present)")
		user       = fs.String("user", NonRootUser, "image user")
		arch       = fs.String("arch", envOr("GOARCH", runtime.GOARCH), "image architecture, or a comma-separated list of them (with -layout)")
		oci        = fs.Bool("oci", false, "use OCI media types instead of Docker schema 2 (always with -layout)")
		tree       = fs.String("tree", "", "directory whose regular files all go into the image at their paths below it; {arch} as in -bin")
		extras     multiFlag
		envs       multiFlag
		labels     multiFlag
		froms      multiFlag
	)
	fs.Var(&extras, "extra-file", "extra file SRC:DST, repeatable; {arch} in SRC as in -bin")
	fs.Var(&envs, "env", "environment KEY=VALUE, repeatable")
	fs.Var(&labels, "label", "image config label KEY=VALUE (also an annotation of the index), repeatable")
	fs.Var(&froms, "from", "with -layout: an image tarball to put in the index as it is (labels added), one per architecture, repeatable; instead of -bin/-tree")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(froms) > 0 {
		if *layoutDir == "" || *tag == "" {
			return errors.New("-from needs -layout and -tag")
		}
		lbl, err := parseLabels(labels)
		if err != nil {
			return err
		}
		imgs, err := FromTarballs(froms, lbl)
		if err != nil {
			return err
		}
		idx, err := IndexOf(imgs, lbl)
		if err != nil {
			return err
		}
		return writeLayout(stdout, idx, *tag, *layoutDir)
	}
	if (*bin == "" && *tree == "") || *tag == "" || (*out == "" && *layoutDir == "") {
		return errors.New("-bin or -tree, -tag, and -o or -layout are required")
	}
	archs := strings.Split(*arch, ",")
	if len(archs) > 1 && *out != "" {
		return fmt.Errorf("cannot write -o %s for %d architectures: a tarball holds one image; use -layout", *out, len(archs))
	}
	lbl, err := parseLabels(labels)
	if err != nil {
		return err
	}
	if *pathInImg == "" && *bin != "" {
		*pathInImg = "/" + path.Base(*bin)
	}
	ep := strings.Fields(*entrypoint)
	if len(ep) == 0 {
		if *pathInImg == "" {
			return errors.New("-entrypoint is required with -tree and no -bin")
		}
		ep = []string{*pathInImg}
	}
	epoch, err := epochFromEnv()
	if err != nil {
		return err
	}
	var per []Options
	for _, a := range archs {
		o := Options{
			Entrypoint: ep,
			Cmd:        strings.Fields(*cmd),
			User:       *user,
			Env:        envs,
			Arch:       a,
			Epoch:      epoch,
			OCI:        *oci || *layoutDir != "",
			Labels:     lbl,
		}
		if *bin != "" {
			o.Files = append(o.Files, File{Src: forArch(*bin, a), Dst: *pathInImg, Mode: 0o755})
		}
		if *tree != "" {
			tf, err := treeFiles(forArch(*tree, a))
			if err != nil {
				return err
			}
			o.Files = append(o.Files, tf...)
		}
		for _, e := range extras {
			f, err := parseExtra(forArch(e, a))
			if err != nil {
				return err
			}
			o.Files = append(o.Files, f)
		}
		per = append(per, o)
	}
	if *out != "" {
		d, err := Write(per[0], *tag, *out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %s %s\n", *out, *tag, d)
	}
	if *layoutDir != "" {
		idx, err := BuildIndex(per, lbl)
		if err != nil {
			return err
		}
		return writeLayout(stdout, idx, *tag, *layoutDir)
	}
	return nil
}

// writeLayout writes idx as an OCI layout under dir and prints
// "DIR TAG DIGEST", as a tarball's line is printed.
func writeLayout(stdout io.Writer, idx v1.ImageIndex, tag, dir string) error {
	d, err := WriteLayout(idx, tag, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s %s\n", dir, tag, d)
	return nil
}

// forArch replaces {arch} in s with arch.
func forArch(s, arch string) string { return strings.ReplaceAll(s, "{arch}", arch) }

// parseLabels parses KEY=VALUE labels; a key given twice is an error.
func parseLabels(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("cannot parse -label %q: want KEY=VALUE", kv)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("cannot use -label %q: %s is already set", kv, k)
		}
		m[k] = v
	}
	return m, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}
