package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// WriteFileAtomic writes data to path through a temporary file and a rename,
// so a reader sees the old or the new content, never a part. It does nothing
// when the file already holds data, and reports whether it wrote.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("cannot create directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("cannot write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return false, fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return false, fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return true, nil
}

// LinkAtomic points the symlink link at target, replacing what is there by a
// rename. A symlink (not a copy) lets named follow kubelet's `..data` swaps.
func LinkAtomic(target, link string) error {
	if cur, err := os.Readlink(link); err == nil && cur == target {
		return nil
	}
	tmp := link + ".tmp-link"
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("cannot link %s to %s: %w", link, target, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot link %s to %s: %w", link, target, err)
	}
	return nil
}

// ReadZoneText reads a rendered zone file with its parts: the renderer
// splits a zone larger than one ConfigMap into parts in other zones
// ConfigMaps, joined by `$INCLUDE <absolute path>` lines, and each of those
// lines is replaced by its part's text. A zone file named writes back (a
// dynamic or signed zone's, seeded into the data volume) is then one file
// that names nothing in a mount that may change under it.
func ReadZoneText(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(b, []byte("$INCLUDE ")) {
		return b, nil
	}
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("$INCLUDE "))
		if !ok {
			out.Write(line)
			continue
		}
		part := string(bytes.TrimSpace(rest))
		if !filepath.IsAbs(part) || strings.ContainsAny(part, " \t;") {
			return nil, fmt.Errorf("%s: cannot follow %q: the renderer writes one absolute path", path, strings.TrimSpace(string(line)))
		}
		pb, err := os.ReadFile(part)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out.Write(pb)
		if len(pb) > 0 && pb[len(pb)-1] != '\n' {
			out.WriteByte('\n')
		}
	}
	return out.Bytes(), nil
}

// SeedFile copies src (its $INCLUDEd parts inlined, ReadZoneText) to dest
// when dest does not exist yet, creating dest's directory; a seeded file is
// never overwritten (named owns it from then on).
// It reports whether it copied. chown, when not nil, is applied to every
// directory it created and to the file.
func SeedFile(src, dest string, chown func(string) error) (bool, error) {
	if _, err := os.Lstat(dest); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("cannot seed %s: %w", dest, err)
	}
	data, err := ReadZoneText(src)
	if err != nil {
		return false, fmt.Errorf("cannot seed %s: %w", dest, err)
	}
	created, err := mkdirAllList(filepath.Dir(dest))
	if err != nil {
		return false, fmt.Errorf("cannot seed %s: %w", dest, err)
	}
	tmp := dest + ".seed-tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return false, fmt.Errorf("cannot seed %s: %w", dest, err)
	}
	if _, err := out.Write(data); err != nil {
		out.Close()
		os.Remove(tmp)
		return false, fmt.Errorf("cannot seed %s: %w", dest, err)
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("cannot seed %s: %w", dest, err)
	}
	if chown != nil {
		for _, p := range append(created, tmp) {
			if err := chown(p); err != nil {
				os.Remove(tmp)
				return false, fmt.Errorf("cannot seed %s: %w", dest, err)
			}
		}
	}
	if err := os.Rename(tmp, dest); err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("cannot seed %s: %w", dest, err)
	}
	return true, nil
}

// mkdirAllList is os.MkdirAll that returns the directories it created.
func mkdirAllList(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sort.Strings(missing) // parents first
	return missing, nil
}

// TreeHash hashes what a reader sees under each root: every regular file
// reached through symlinks, by relative path and content. Names starting
// with ".." (kubelet's `..data` and timestamped directories) are skipped, so
// an atomic `..data` swap changes the hash exactly when visible content does.
// A missing root hashes as empty.
func TreeHash(roots ...string) (string, error) {
	h := sha256.New()
	for _, root := range roots {
		fmt.Fprintf(h, "root %s\n", root)
		if err := hashDir(h, root, "", 0); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// TreeVersion is TreeHash without reading what need not be read: a
// directory laid as the kubelet lays a ConfigMap (a `..data` link) is
// hashed by the directory its content is in (dirVersion: a new one for
// every switch) and its visible names, not by its files' content. The
// agent polls it every PollInterval: with 100,000 zone files, TreeHash
// read every file each time.
func TreeVersion(roots ...string) (string, error) {
	h := sha256.New()
	for _, root := range roots {
		fmt.Fprintf(h, "root %s\n", root)
		if err := versionDir(h, root, "", 0); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func versionDir(h io.Writer, root, rel string, depth int) error {
	dir := filepath.Join(root, rel)
	ver := dirVersion(dir)
	if ver == "" {
		return hashDirWith(h, root, rel, depth, versionDir)
	}
	names, err := visibleNames(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "laid %s %s %s\n", rel, ver, strings.Join(names, "/"))
	return nil
}

func hashDir(h io.Writer, root, rel string, depth int) error {
	return hashDirWith(h, root, rel, depth, hashDir)
}

// hashDirWith hashes root/rel's files and, by sub, its directories.
func hashDirWith(h io.Writer, root, rel string, depth int, sub func(h io.Writer, root, rel string, depth int) error) error {
	if depth > 8 {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(root, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", filepath.Join(root, rel), err)
	}
	for _, e := range entries { // ReadDir sorts by name
		name := e.Name()
		if strings.HasPrefix(name, "..") || strings.Contains(name, ".tmp-") {
			continue
		}
		p := filepath.Join(rel, name)
		fi, err := os.Stat(filepath.Join(root, p))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // dangling link mid-swap
			}
			return fmt.Errorf("cannot stat %s: %w", filepath.Join(root, p), err)
		}
		switch {
		case fi.IsDir():
			fmt.Fprintf(h, "dir %s\n", p)
			if err := sub(h, root, p, depth+1); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(filepath.Join(root, p))
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return fmt.Errorf("cannot read %s: %w", filepath.Join(root, p), err)
			}
			sum := sha256.Sum256(b)
			fmt.Fprintf(h, "file %s %x\n", p, sum)
		}
	}
	return nil
}
