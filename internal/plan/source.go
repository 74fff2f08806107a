package plan

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// isManifest says whether a package file may hold objects.
func isManifest(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return path.Base(name) != "kustomization.yaml"
	}
	return false
}

// LoadDir reads every manifest under dir (recursively: kpt writes the
// rendered objects into rendered/<cluster>/). renderedOnly skips the inputs.
func LoadDir(dir string, renderedOnly bool) (*Package, error) {
	p := &Package{RenderedOnly: renderedOnly}
	var files []string
	err := filepath.WalkDir(dir, func(f string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && f != dir {
			return filepath.SkipDir
		}
		if !d.IsDir() && isManifest(d.Name()) {
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	names := make([]string, len(files))
	for i, f := range files {
		rel, _ := filepath.Rel(dir, f)
		names[i] = filepath.ToSlash(rel)
	}
	if err := p.addFiles(names, func(i int) ([]byte, error) { return os.ReadFile(files[i]) }); err != nil {
		return nil, err
	}
	return p, nil
}

// LoadGit reads the manifests under dir as they are in a git ref (a
// commit, branch or tag), with the git CLI. renderedOnly skips the inputs.
func LoadGit(dir, ref string, renderedOnly bool) (*Package, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	top, err := gitOut(abs, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	topDir := strings.TrimSpace(string(top))
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel, err := filepath.Rel(topDir, abs)
	if err != nil {
		return nil, err
	}
	rel = filepath.ToSlash(rel)
	list, err := gitOut(topDir, nil, "ls-tree", "-r", "-z", "--name-only", ref, "--", rel)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range strings.Split(string(list), "\x00") {
		if n != "" && isManifest(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return &Package{}, nil
	}
	// One git cat-file for every file.
	var req bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&req, "%s:%s\n", ref, n)
	}
	out, err := gitOut(topDir, &req, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	p := &Package{RenderedOnly: renderedOnly}
	r := bufio.NewReader(bytes.NewReader(out))
	datas := make([][]byte, len(names))
	rels := make([]string, len(names))
	for i, n := range names {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			return nil, fmt.Errorf("git cat-file %s:%s: %s", ref, n, strings.TrimSpace(head))
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %q", head)
		}
		data := make([]byte, size+1)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		rels[i] = strings.TrimPrefix(strings.TrimPrefix(n, rel), "/")
		datas[i] = data[:size]
	}
	if err := p.addFiles(rels, func(i int) ([]byte, error) { return datas[i], nil }); err != nil {
		return nil, err
	}
	return p, nil
}

func gitOut(dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// RenderError is a render that failed with results (the inputs are
// invalid): the plan cannot be made.
type RenderError struct {
	Side    string
	Results diag.Results
}

func (e *RenderError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cannot render the %s inputs:", e.Side)
	for _, r := range e.Results {
		if r.Severity == diag.Error {
			b.WriteString("\n  " + r.String())
		}
	}
	return b.String()
}

// Sides are the old and new renders a plan compares.
type Sides struct {
	Old, New []Object
	Notes    []string
}

// Prepare makes the two renders. The old side is the rendered output the
// old package holds, or, when it holds none (a kustomize base, a package
// never rendered), a render of its inputs. The new side is always a render
// of the new inputs, with the old render as previous output, so serials and
// key material carry over exactly as kpt would carry them.
func Prepare(oldPkg, newPkg *Package, rand io.Reader) (*Sides, error) {
	s := &Sides{Old: oldPkg.Rendered}
	if len(oldPkg.Rendered) == 0 && len(oldPkg.Items) > 0 {
		objs, rs := pipeline.Run(pipeline.Input{Items: oldPkg.Items}, render.Options{Rand: rand})
		if rs.HasErrors() {
			return nil, &RenderError{Side: "old", Results: rs}
		}
		var err error
		if s.Old, err = FromRender(objs); err != nil {
			return nil, err
		}
		s.Notes = append(s.Notes, "the old side holds no rendered output: its inputs were rendered, so serials and generated keys start fresh on that side")
	}
	prev := (&Package{Rendered: s.Old}).Previous()
	objs, rs := pipeline.Run(pipeline.Input{Items: newPkg.Items, Previous: prev}, render.Options{Rand: rand})
	if rs.HasErrors() {
		return nil, &RenderError{Side: "new", Results: rs}
	}
	var err error
	if s.New, err = FromRender(objs); err != nil {
		return nil, err
	}
	return s, nil
}

// Rendered pairs two packages' rendered output as they are, rendering
// nothing: for a package kpt has already rendered (kpt fn render wrote the
// new output), compared with a git ref or a directory.
func Rendered(oldPkg, newPkg *Package) (*Sides, error) {
	if len(newPkg.Rendered) == 0 {
		return nil, fmt.Errorf("the new side holds no rendered objects (label app.kubernetes.io/managed-by: bind-fn): run kpt fn render first, or plan without --rendered")
	}
	s := &Sides{Old: oldPkg.Rendered, New: newPkg.Rendered}
	if len(oldPkg.Rendered) == 0 {
		s.Notes = append(s.Notes, "the old side holds no rendered output: everything shows as added (plan without --rendered to render its inputs)")
	}
	return s, nil
}
