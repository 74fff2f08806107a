package main

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// BuildIndex assembles an OCI image index holding one image per Options
// (one per architecture, in the order given), annotated with annotations
// (the org.opencontainers.image.* labels the images carry, so a registry
// shows them on the index too).
func BuildIndex(per []Options, annotations map[string]string) (v1.ImageIndex, error) {
	var imgs []v1.Image
	for _, o := range per {
		o.OCI = true
		img, err := Build(o)
		if err != nil {
			return nil, err
		}
		imgs = append(imgs, img)
	}
	return IndexOf(imgs, annotations)
}

// IndexOf is the OCI image index of imgs, one per platform, in the order
// given, annotated with annotations.
func IndexOf(imgs []v1.Image, annotations map[string]string) (v1.ImageIndex, error) {
	if len(imgs) == 0 {
		return nil, fmt.Errorf("cannot build an image index: no architectures")
	}
	seen := map[string]bool{}
	var adds []mutate.IndexAddendum
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		p := cf.OS + "/" + cf.Architecture
		if seen[p] {
			return nil, fmt.Errorf("cannot build an image index: platform %s given twice", p)
		}
		seen[p] = true
		adds = append(adds, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: cf.OS, Architecture: cf.Architecture}},
		})
	}
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
	if len(annotations) > 0 {
		idx = mutate.Annotations(idx, annotations).(v1.ImageIndex)
	}
	return idx, nil
}

// WriteLayout writes idx to dir as an OCI image layout
// (what `crane push`, `skopeo copy oci:` and `ctr import` read), the index
// named tag in index.json. dir is replaced, so no blob of an earlier build
// stays behind. It returns the index's digest, the one a release names.
func WriteLayout(idx v1.ImageIndex, tag, dir string) (v1.Hash, error) {
	ref, err := name.NewTag(tag)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("cannot parse -tag %q: %w", tag, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("cannot write %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref.Name(),
	})); err != nil {
		return v1.Hash{}, fmt.Errorf("cannot write %s: %w", dir, err)
	}
	return idx.Digest()
}

// treeFiles lists every regular file under dir as a File at its path below
// dir, executable (0755) if any execute bit is set on disk, else 0644.
// Anything but directories and regular files (a symlink, a device) is an
// error: the image would not hold what the tree shows.
func treeFiles(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("cannot place %q from -tree: not a regular file (copy the tree with cp -L)", p)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if fi.Mode().Perm()&0o111 != 0 {
			mode = 0o755
		}
		files = append(files, File{Src: p, Dst: "/" + filepath.ToSlash(rel), Mode: mode})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read -tree %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("cannot use -tree %s: it holds no files", dir)
	}
	return files, nil
}

// FromTarballs reads single-image tarballs (crossplane xpkg build writes
// one per architecture) and sets labels on each image's config.
func FromTarballs(files []string, labels map[string]string) ([]v1.Image, error) {
	var imgs []v1.Image
	for _, f := range files {
		img, err := tarball.ImageFromPath(f, nil)
		if err != nil {
			return nil, fmt.Errorf("cannot read image tarball %s: %w", f, err)
		}
		if len(labels) > 0 {
			cf, err := img.ConfigFile()
			if err != nil {
				return nil, fmt.Errorf("cannot read the config of %s: %w", f, err)
			}
			cfg := cf.Config
			if cfg.Labels == nil {
				cfg.Labels = map[string]string{}
			}
			maps.Copy(cfg.Labels, labels)
			if img, err = mutate.Config(img, cfg); err != nil {
				return nil, err
			}
		}
		imgs = append(imgs, img)
	}
	return imgs, nil
}
