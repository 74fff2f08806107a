package plan_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

// A case is testdata/cases/<name>/: reason.txt says what it shows; new/
// holds files that replace (or add to) the base package's files for the
// new side; remove.txt lists base files the new side drops; old/ likewise
// changes the old side. The old side is rendered (as kpt leaves it in the
// package) unless the case has a file old-unrendered. Goldens: plan.md,
// plan.json, exit (0 no change, 2 DNS change, 3 objects only).
func TestGoldenPlans(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "cases", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			reason, err := os.ReadFile(filepath.Join(dir, "reason.txt"))
			if err != nil {
				t.Fatalf("every case says why it exists in reason.txt: %v", err)
			}
			oldPkg := overlay(t, filepath.Join("testdata", "base"), filepath.Join(dir, "old"), nil)
			newPkg := overlay(t, filepath.Join("testdata", "base"), filepath.Join(dir, "new"), lines(t, filepath.Join(dir, "remove.txt")))
			if _, err := os.Stat(filepath.Join(dir, "old-unrendered")); err != nil {
				objs, rs := pipeline.Run(pipeline.Input{Items: oldPkg.Items}, render.Options{Rand: &testutil.DetRand{}})
				if rs.HasErrors() {
					t.Fatalf("old render: %v", rs)
				}
				if oldPkg.Rendered, err = plan.FromRender(objs); err != nil {
					t.Fatal(err)
				}
				oldPkg.Items = nil
			}
			sides, err := plan.Prepare(oldPkg, newPkg, &testutil.DetRand{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Compare(sides.Old, sides.New)
			if err != nil {
				t.Fatal(err)
			}
			p.Notes = sides.Notes
			checkComplete(t, sides, p)
			js, err := p.JSON()
			if err != nil {
				t.Fatal(err)
			}
			exit := 0
			switch {
			case p.DNSChange:
				exit = 2
			case p.Changed:
				exit = 3
			}
			got := map[string]string{
				"plan.md":   p.Markdown(plan.DefaultLimits),
				"plan.json": string(js),
				"exit":      strconv.Itoa(exit) + "\n",
			}
			for _, name := range slices.Sorted(maps.Keys(got)) {
				golden.Check(t, filepath.Join(dir, name), []byte(got[name]))
			}
			if t.Failed() {
				t.Logf("the case: %s", strings.TrimSpace(string(reason)))
			}
		})
	}
}

// overlay is the base package with dir's files replacing (or adding to)
// base files of the same name, and the files in remove dropped.
func overlay(t *testing.T, base, dir string, remove []string) *plan.Package {
	t.Helper()
	files := map[string]string{}
	for _, d := range []string{base, dir} {
		matches, _ := filepath.Glob(filepath.Join(d, "*.yaml"))
		for _, f := range matches {
			files[filepath.Base(f)] = f
		}
	}
	for _, r := range remove {
		if _, ok := files[r]; !ok {
			t.Fatalf("remove.txt names %q, which the base does not have", r)
		}
		delete(files, r)
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	p := &plan.Package{}
	for _, n := range names {
		data, err := os.ReadFile(files[n])
		if err != nil {
			t.Fatal(err)
		}
		if err := p.AddFile(n, data); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func lines(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// checkComplete: every zone of the old render with the plan's RRset
// changes applied is the zone of the new render, and a zone the plan does
// not list is unchanged.
func checkComplete(t *testing.T, sides *plan.Sides, p *plan.Plan) {
	t.Helper()
	oldZones, err := plan.ZoneContents(sides.Old)
	if err != nil {
		t.Fatal(err)
	}
	newZones, err := plan.ZoneContents(sides.New)
	if err != nil {
		t.Fatal(err)
	}
	planned := map[string][]plan.RRsetChange{}
	for _, c := range p.Clusters {
		for _, z := range c.Zones {
			id := z.Zone
			if z.View != "" {
				id = z.View + "/" + z.Zone
			}
			planned[id] = append(planned[id], z.RRsets...)
		}
	}
	ids := map[string]bool{}
	for id := range oldZones {
		ids[id] = true
	}
	for id := range newZones {
		ids[id] = true
	}
	for id := range ids {
		old := oldZones[id]
		if old == nil {
			old = plan.ZoneData{}
		}
		want := newZones[id]
		if want == nil {
			want = plan.ZoneData{}
		}
		if d := cmp.Diff(want, old.Apply(planned[id])); d != "" {
			t.Errorf("zone %s: old + plan != new (-new +old+plan):\n%s", id, d)
		}
	}
}
