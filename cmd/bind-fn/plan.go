package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"git.unkin.net/unkin/bind-fn/internal/krm"
	"git.unkin.net/unkin/bind-fn/internal/plan"
)

// Exit codes of plan, for CI.
const (
	exitNoChange  = 0
	exitDNSChange = 2
	exitObjects   = 3 // objects change, DNS does not (e.g. resources, Service annotations)
)

// PlanCmd is `bind-fn plan`.
type PlanCmd struct {
	Dir       string `arg:"" optional:"" default:"." help:"The package with the new inputs (a kpt package or a directory of bind.unkin.net objects)."`
	Git       string `help:"Compare with the package as it is in this git ref (branch, tag, commit) instead of the rendered output in DIR." placeholder:"REF" xor:"old"`
	Old       string `help:"Compare with this directory instead of the rendered output in DIR." placeholder:"DIR" xor:"old" type:"path"`
	Rendered  bool   `help:"DIR already holds the new render (kpt fn render ran): compare the two rendered outputs, render nothing."`
	Format    string `enum:"markdown,json" default:"markdown" help:"Output: markdown (a pull-request comment) or json (complete, for tools)."`
	MaxRRsets int    `default:"40" help:"Markdown: most RRset changes shown per zone (the rest are counted)."`
	MaxZones  int    `default:"25" help:"Markdown: most zones shown in detail per cluster (the rest get a line of counts)."`
}

// Run prints the plan. Exit code: 0 no change, 2 a DNS change, 3 objects
// change without a DNS change.
func (c *PlanCmd) Run(out io.Writer) (int, error) {
	newPkg, err := plan.LoadDir(c.Dir, c.Rendered)
	if err != nil {
		return 1, err
	}
	oldPkg := &plan.Package{Rendered: newPkg.Rendered}
	switch {
	case c.Git != "":
		if oldPkg, err = plan.LoadGit(c.Dir, c.Git, c.Rendered); err != nil {
			return 1, err
		}
	case c.Old != "":
		if oldPkg, err = plan.LoadDir(c.Old, c.Rendered); err != nil {
			return 1, err
		}
	}
	var sides *plan.Sides
	if c.Rendered {
		if c.Git == "" && c.Old == "" {
			return 1, fmt.Errorf("--rendered compares DIR's render with another: give --git REF or --old DIR")
		}
		sides, err = plan.Rendered(oldPkg, newPkg)
	} else {
		sides, err = plan.Prepare(oldPkg, newPkg, rand.Reader)
	}
	if err != nil {
		c.locate(err)
		return 1, err
	}
	p, err := plan.Compare(sides.Old, sides.New)
	if err != nil {
		return 1, err
	}
	p.Notes = sides.Notes
	switch c.Format {
	case "json":
		b, err := p.JSON()
		if err != nil {
			return 1, err
		}
		if _, err := out.Write(b); err != nil {
			return 1, err
		}
	default:
		lim := plan.DefaultLimits
		lim.RRsets, lim.Zones = c.MaxRRsets, c.MaxZones
		if _, err := fmt.Fprint(out, p.Markdown(lim)); err != nil {
			return 1, err
		}
	}
	switch {
	case p.DNSChange:
		return exitDNSChange, nil
	case p.Changed:
		return exitObjects, nil
	}
	return exitNoChange, nil
}

// locate sets the file:line of a failed render's results, read from the
// directory the side came from (a git ref's files are not on disk: those
// name the file and document).
func (c *PlanCmd) locate(err error) {
	var re *plan.RenderError
	if !errors.As(err, &re) {
		return
	}
	dir := c.Dir
	if re.Side == "old" {
		if c.Old == "" {
			return
		}
		dir = c.Old
	}
	l := krm.Locator{Read: func(file string) ([]byte, bool) {
		if !filepath.IsLocal(filepath.FromSlash(file)) {
			return nil, false
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
		return b, err == nil
	}}
	l.Locate(re.Results)
}
