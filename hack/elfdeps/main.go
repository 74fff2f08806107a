// Command elfdeps lists what a dynamically linked program needs from a root
// file system to start: its interpreter (PT_INTERP) and every shared library
// it loads (DT_NEEDED, transitively), found where glibc's loader looks on
// Debian (the object's DT_RUNPATH, then /lib/<triplet>, /usr/lib/<triplet>,
// /lib, /usr/lib). It reads ELF headers only, so it works on a root of
// another architecture, which ldd (running the loader) cannot: that is how
// hack/bind-image.sh assembles the arm64 BIND image on an amd64 machine.
//
//	elfdeps -root bin/bind-9.20 /usr/sbin/named /usr/sbin/rndc
//
// prints one line per file, sorted: the path in the root (where the loader
// finds it), a tab, and the regular file that path resolves to inside the
// root (symlinks followed within it, never into the host).
package main

import (
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "elfdeps:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("elfdeps", flag.ContinueOnError)
	root := fs.String("root", "", "root file system the programs and libraries are in (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" || fs.NArg() == 0 {
		return errors.New("usage: elfdeps -root DIR PROGRAM [PROGRAM]")
	}
	deps, err := Deps(*root, fs.Args())
	if err != nil {
		return err
	}
	for _, d := range deps {
		fmt.Fprintf(stdout, "%s\t%s\n", d.Path, d.File)
	}
	return nil
}

// Dep is one file a program needs.
type Dep struct {
	// Path is the absolute path inside the root where the loader finds it.
	Path string
	// File is the regular file on disk Path resolves to (below root).
	File string
}

// triplets are Debian's multiarch directories by ELF machine.
var triplets = map[elf.Machine]string{
	elf.EM_X86_64:  "x86_64-linux-gnu",
	elf.EM_AARCH64: "aarch64-linux-gnu",
	elf.EM_386:     "i386-linux-gnu",
	elf.EM_RISCV:   "riscv64-linux-gnu",
	elf.EM_PPC64:   "powerpc64le-linux-gnu",
	elf.EM_S390:    "s390x-linux-gnu",
}

// Deps returns the interpreters and libraries progs need, sorted by Path.
// A library found nowhere, or one of another machine than the program, is
// an error: the image would not start.
func Deps(root string, progs []string) ([]Dep, error) {
	w := &walker{root: root, found: map[string]string{}, loaded: map[string]bool{}}
	for _, prog := range progs {
		if err := w.walk(prog); err != nil {
			return nil, err
		}
	}
	deps := make([]Dep, 0, len(w.found))
	for p, f := range w.found {
		deps = append(deps, Dep{Path: p, File: f})
	}
	sort.Slice(deps, func(i, j int) bool { return deps[i].Path < deps[j].Path })
	return deps, nil
}

// walker collects files of one root.
type walker struct {
	root string
	// found maps a path in the root to the file on disk.
	found map[string]string
	// loaded are the interpreters' names: the loader is already in memory,
	// so a library naming it (libc names ld-linux-*.so) loads nothing more.
	loaded map[string]bool
}

func (w *walker) walk(prog string) error {
	root, found := w.root, w.found
	file, err := resolve(root, prog)
	if err != nil {
		return fmt.Errorf("cannot find %s in %s: %w", prog, root, err)
	}
	f, err := elf.Open(file)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", prog, err)
	}
	defer f.Close()
	triplet, ok := triplets[f.Machine]
	if !ok {
		return fmt.Errorf("cannot resolve libraries of %s: no Debian multiarch directory known for %s", prog, f.Machine)
	}
	if interp := interpreter(f); interp != "" {
		if err := add(root, interp, found, f.Machine); err != nil {
			return fmt.Errorf("cannot find the interpreter of %s: %w", prog, err)
		}
		w.loaded[path.Base(interp)] = true
	}
	needed, err := f.DynString(elf.DT_NEEDED)
	if err != nil {
		return fmt.Errorf("cannot read the dynamic section of %s: %w", prog, err)
	}
	runpath, _ := f.DynString(elf.DT_RUNPATH)
	if len(runpath) == 0 {
		runpath, _ = f.DynString(elf.DT_RPATH)
	}
	var dirs []string
	for _, rp := range runpath {
		for d := range strings.SplitSeq(rp, ":") {
			if strings.Contains(d, "$") {
				return fmt.Errorf("cannot resolve libraries of %s: run path %q uses a dynamic string token", prog, d)
			}
			dirs = append(dirs, d)
		}
	}
	dirs = append(dirs, "/lib/"+triplet, "/usr/lib/"+triplet, "/lib", "/usr/lib")
	for _, lib := range needed {
		if w.loaded[lib] {
			continue
		}
		p, ok := lookup(root, dirs, lib)
		if !ok {
			return fmt.Errorf("cannot find %s, which %s needs, in %s (searched %s)", lib, prog, root, strings.Join(dirs, " "))
		}
		if _, seen := found[p]; seen {
			continue
		}
		if err := add(root, p, found, f.Machine); err != nil {
			return err
		}
		if err := w.walk(p); err != nil {
			return err
		}
	}
	return nil
}

// add records p (the path in the root) after checking it is an ELF object
// of machine m.
func add(root, p string, found map[string]string, m elf.Machine) error {
	file, err := resolve(root, p)
	if err != nil && strings.HasPrefix(p, "/lib") {
		// A root unpacked without its /lib -> usr/lib link (mmdebstrap's
		// extract variant): the file is under /usr; the image keeps the
		// path the program asks for.
		file, err = resolve(root, "/usr"+p)
	}
	if err != nil {
		return fmt.Errorf("cannot find %s in %s: %w", p, root, err)
	}
	f, err := elf.Open(file)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", p, err)
	}
	defer f.Close()
	if f.Machine != m {
		return fmt.Errorf("cannot use %s: it is built for %s, the program for %s", p, f.Machine, m)
	}
	found[p] = file
	return nil
}

func lookup(root string, dirs []string, lib string) (string, bool) {
	for _, d := range dirs {
		p := path.Join(d, lib)
		if _, err := resolve(root, p); err == nil {
			return p, true
		}
	}
	return "", false
}

func interpreter(f *elf.File) string {
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(p.Open())
		if err != nil {
			return ""
		}
		return strings.TrimRight(string(b), "\x00")
	}
	return ""
}

// resolve follows p inside root, component by component: an absolute
// symlink target starts again at root, never at the host's /. The result
// is a regular file on disk.
func resolve(root, p string) (string, error) {
	rest := strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/")
	cur := "/"
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		next := path.Join(cur, c)
		fi, err := os.Lstat(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if !path.IsAbs(target) {
			target = path.Join(cur, target)
		}
		rest = append(strings.Split(strings.Trim(path.Clean(target), "/"), "/"), rest...)
		cur = "/"
	}
	file := filepath.Join(root, cur)
	fi, err := os.Stat(file)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	return file, nil
}
