package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/krm"
)

// RenderCmd is `bind-fn render`: what `kpt fn render DIR` does with the
// package's bind-fn pipeline, without kpt, a container runtime or
// --allow-exec. It reads and writes the package with the library kpt uses
// (kyaml's kio), in kpt's order and with kpt's options, so the files it
// writes are kpt's byte for byte (TestRenderMatchesKpt): the rendered
// objects under rendered/<cluster>/, the inputs marked local-config, the
// files of objects a render dropped deleted.
type RenderCmd struct {
	Dir string `arg:"" type:"existingdir" help:"The package: a kpt package whose Kptfile pipeline runs fn-render and fn-validate, or a directory of bind.unkin.net objects (then: render, then validate)."`
}

// kpt's names: the Kptfile, the annotation kpt puts on every resource it
// reads (the package it belongs to), and the files it reads (the Kptfile,
// YAML and JSON).
const (
	kptfileName       = "Kptfile"
	pkgPathAnnotation = "internal.config.kubernetes.io/package-path"
)

var matchAllKRM = append([]string{kptfileName}, kio.MatchAll...)

// renderFunctions are the functions bind-fn render runs in-process, by the
// name a Kptfile gives them (the image's or executable's base name).
var renderFunctions = map[string]krm.Mode{"fn-render": krm.RenderMode, "fn-validate": krm.ValidateMode}

// Run renders the package in place. Exit code 1 and nothing written when a
// function reports an error (the results, with object, field and file, go
// to stderr, as kpt prints them).
func (c *RenderCmd) Run(stderr io.Writer) (int, error) {
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return 1, err
	}
	mutators, validators, err := kptPipeline(dir)
	if err != nil {
		return 1, err
	}
	if err := noSubpackages(dir); err != nil {
		return 1, err
	}
	// kpt's pkg.LocalResources.
	resources, err := (&kio.LocalPackageReader{
		PackagePath:        dir,
		PackageFileName:    kptfileName,
		IncludeSubpackages: false,
		MatchFilesGlob:     matchAllKRM,
		PreserveSeqIndent:  true,
		SetAnnotations:     map[string]string{pkgPathAnnotation: dir},
		WrapBareSeqNode:    true,
	}).Read()
	if err != nil {
		if serr := firstSyntaxError(dir); serr != nil {
			return 1, serr
		}
		return 1, fmt.Errorf("cannot read the package %s: %w", c.Dir, err)
	}
	inputFiles, err := filesOf(resources)
	if err != nil {
		return 1, err
	}
	// kpt's runMutators, then runValidators on a copy.
	for _, name := range mutators {
		if resources, err = runFunction(name, resources, dir, stderr); err != nil {
			return 1, err
		}
	}
	for _, name := range validators {
		copies := make([]*kyaml.RNode, len(resources))
		for i, r := range resources {
			copies[i] = r.Copy()
		}
		if _, err := runFunction(name, copies, dir, stderr); err != nil {
			return 1, err
		}
	}
	// kpt's adjustRelPath (the root package: the path stays, both path
	// annotations are set, the package-path one goes).
	for _, r := range resources {
		p, _, err := kioutil.GetFileAnnotations(r)
		if err != nil {
			return 1, err
		}
		if err := r.PipeE(kyaml.SetAnnotation(kioutil.PathAnnotation, p)); err != nil {
			return 1, err
		}
		//lint:ignore SA1019 kpt sets the legacy path annotation too (its adjustRelPath), so the bytes match
		if err := r.PipeE(kyaml.SetAnnotation(kioutil.LegacyPathAnnotation, p)); err != nil {
			return 1, err
		}
		if err := r.PipeE(kyaml.ClearAnnotation(pkgPathAnnotation)); err != nil {
			return 1, err
		}
	}
	outputFiles, err := filesOf(resources)
	if err != nil {
		return 1, err
	}
	// kpt's in-place writer, then its pruneResources.
	if err := (&kio.LocalPackageReadWriter{
		PackagePath:        dir,
		PreserveSeqIndent:  true,
		PackageFileName:    kptfileName,
		IncludeSubpackages: true,
		WrapBareSeqNode:    true,
		MatchFilesGlob:     matchAllKRM,
	}).Write(resources); err != nil {
		return 1, fmt.Errorf("cannot write the package %s: %w", c.Dir, err)
	}
	for f := range inputFiles {
		if !outputFiles[f] {
			if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
				return 1, err
			}
		}
	}
	fmt.Fprintf(stderr, "Rendered %s: %d function(s), %d resource(s).\n", c.Dir, len(mutators)+len(validators), len(resources))
	return 0, nil
}

// runFunction runs one of bind-fn's functions on the resources the way kpt
// runs a function (kyaml's FunctionFilter, global scope: the ResourceList
// encoding, the ids that carry comments over, the default paths), with the
// function in-process instead of a container or an exec.
func runFunction(name string, in []*kyaml.RNode, dir string, stderr io.Writer) ([]*kyaml.RNode, error) {
	// The functions read the package's files only to name the line of a
	// result (krm.PackageFile, by the package-path annotation kpt sets).
	p := &krm.Processor{Mode: renderFunctions[name], Files: krm.PackageFile}
	var out []byte
	f := &runtimeutil.FunctionFilter{
		GlobalScope: true,
		Run: func(r io.Reader, w io.Writer) error {
			b, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			var runErr error
			out, runErr = p.Run(b)
			if _, err := w.Write(out); err != nil {
				return err
			}
			return runErr
		},
	}
	res, err := f.Filter(in)
	status := "PASS"
	if err != nil {
		status = "FAIL"
	}
	fmt.Fprintf(stderr, "[%s] %q\n", status, name)
	if rl, perr := fn.ParseResourceList(out); perr == nil && len(rl.Results) > 0 {
		fmt.Fprintln(stderr, "  Results:")
		for _, r := range rl.Results {
			fmt.Fprintf(stderr, "    %s\n", r.String())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s failed: nothing was written (the results above say what to fix)", name)
	}
	// kpt's setPkgPathAnnotationIfNotExist: a new object belongs to this package.
	for _, r := range res {
		if r.GetAnnotations()[pkgPathAnnotation] == "" {
			if err := r.PipeE(kyaml.SetAnnotation(pkgPathAnnotation, dir)); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// firstSyntaxError is the first YAML syntax error of the package's files
// (in name order), named by the file's path in the package and its line,
// as bind-fn plan names it (krm.SyntaxError); nil if every file parses.
func firstSyntaxError(dir string) error {
	var first error
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || first != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !matchesKRM(d.Name()) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		first = krm.SyntaxError(filepath.ToSlash(rel), b)
		return nil
	})
	return first
}

func matchesKRM(name string) bool {
	for _, g := range matchAllKRM {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// filesOf is the set of files the resources live in (their path annotation).
func filesOf(rs []*kyaml.RNode) (map[string]bool, error) {
	files := map[string]bool{}
	for _, r := range rs {
		p, _, err := kioutil.GetFileAnnotations(r)
		if err != nil {
			return nil, fmt.Errorf("path annotation missing: %w", err)
		}
		if p == "" {
			return nil, fmt.Errorf("%s %q has no path annotation", r.GetKind(), r.GetName())
		}
		files[filepath.Clean(p)] = true
	}
	return files, nil
}

// kptFunction is what bind-fn render reads of a Kptfile's pipeline entry.
type kptFunction struct {
	Image      string            `json:"image,omitempty"`
	Exec       string            `json:"exec,omitempty"`
	Name       string            `json:"name,omitempty"`
	ConfigPath string            `json:"configPath,omitempty"`
	ConfigMap  map[string]string `json:"configMap,omitempty"`
	Selectors  []any             `json:"selectors,omitempty"`
	Exclusions []any             `json:"exclusions,omitempty"`
}

// kptPipeline is the package's pipeline, each function by its bind-fn
// name. A package without a Kptfile renders, then validates. A function
// other than bind-fn's own, or one with a config or selectors, is an error
// that names the Kptfile field: kpt fn render runs those.
func kptPipeline(dir string) (mutators, validators []string, err error) {
	b, err := os.ReadFile(filepath.Join(dir, kptfileName))
	if os.IsNotExist(err) {
		return []string{"fn-render"}, []string{"fn-validate"}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var kf struct {
		Pipeline struct {
			Mutators   []kptFunction `json:"mutators"`
			Validators []kptFunction `json:"validators"`
		} `json:"pipeline"`
	}
	if err := yaml.Unmarshal(b, &kf); err != nil {
		return nil, nil, fmt.Errorf("%s: cannot read the Kptfile: %v", filepath.Join(dir, kptfileName), err)
	}
	names := func(field string, fns []kptFunction) ([]string, error) {
		var out []string
		for i, f := range fns {
			at := fmt.Sprintf("%s: pipeline.%s[%d]", filepath.Join(dir, kptfileName), field, i)
			ref := f.Image
			if exec := strings.Fields(f.Exec); ref == "" && len(exec) > 0 {
				ref = exec[0]
			}
			base := path.Base(filepath.ToSlash(ref))
			if j := strings.IndexAny(base, ":@"); j >= 0 {
				base = base[:j]
			}
			if _, ok := renderFunctions[base]; !ok {
				return nil, fmt.Errorf("%s: %q is not one of bind-fn's functions (fn-render, fn-validate); render this package with kpt fn render", at, ref)
			}
			if f.ConfigPath != "" || len(f.ConfigMap) > 0 || len(f.Selectors) > 0 || len(f.Exclusions) > 0 {
				return nil, fmt.Errorf("%s: bind-fn render takes no functionConfig, selectors or exclusions; render this package with kpt fn render", at)
			}
			out = append(out, base)
		}
		return out, nil
	}
	if mutators, err = names("mutators", kf.Pipeline.Mutators); err != nil {
		return nil, nil, err
	}
	if validators, err = names("validators", kf.Pipeline.Validators); err != nil {
		return nil, nil, err
	}
	return mutators, validators, nil
}

// noSubpackages refuses a package holding another Kptfile: kpt hydrates
// subpackages first, each with its own pipeline; bind-fn render does not.
func noSubpackages(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != kptfileName || filepath.Dir(p) == dir {
			return nil
		}
		return fmt.Errorf("%s: a subpackage; bind-fn render renders one package, render this one with kpt fn render", p)
	})
}
