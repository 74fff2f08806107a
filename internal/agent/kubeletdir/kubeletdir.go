// Package kubeletdir lays out files the way kubelet's AtomicWriter updates a
// ConfigMap or Secret volume: the payload lives in a timestamped directory
// `..<ts>`, `..data` links to it, and every visible name links through
// `..data`. An update writes a new `..<ts>` directory and renames a fresh
// `..data_tmp` link over `..data`, so readers switch atomically. Tests and
// the multi-pod suite use it to make real kubelet-style swaps.
package kubeletdir

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

var seq atomic.Int64

// Write replaces the content of the volume at dir with files (relative
// path -> content), atomically for readers going through the visible names.
func Write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ts := fmt.Sprintf("..%s.%d", time.Now().UTC().Format("2006_01_02_15_04_05.000000000"), seq.Add(1))
	tsDir := filepath.Join(dir, ts)
	if err := os.Mkdir(tsDir, 0o755); err != nil {
		return err
	}
	top := map[string]bool{}
	for name, b := range files {
		clean := filepath.Clean(name)
		if filepath.IsAbs(clean) || strings.HasPrefix(clean, "..") {
			return fmt.Errorf("kubeletdir: bad path %q", name)
		}
		p := filepath.Join(tsDir, clean)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		top[strings.Split(clean, string(filepath.Separator))[0]] = true
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(ts, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		return err
	}
	names := make([]string, 0, len(top))
	for n := range top {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		link := filepath.Join(dir, n)
		if cur, err := os.Readlink(link); err == nil && cur == filepath.Join("..data", n) {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", n), link); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") && !top[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if old != "" && old != ts {
		return os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}
