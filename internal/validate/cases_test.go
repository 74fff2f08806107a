package validate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

// expectFile is testdata/<bad|good>/<case>/expect.yaml.
type expectFile struct {
	// Reason says what the case is about.
	Reason string `json:"reason"`
	// Results are every result a good case must produce (info only), and
	// no others, each message by a fragment. A bad case pins its results
	// in full in .expected/results.yaml instead (go test -update).
	Results []expectResult `json:"results"`
	// Previous are ConfigMaps of a previous render, for serial checks.
	Previous []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		ZoneState string `json:"zoneState"`
	} `json:"previous"`
}

type expectResult struct {
	Severity string `json:"severity"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Field    string `json:"field"`
	// Message is a fragment of the message.
	Message string `json:"message"`
}

func (e expectResult) matches(r diag.Result) bool {
	return string(r.Severity) == e.Severity && r.Source.Ref.Kind == e.Kind && r.Source.Ref.Name == e.Name &&
		r.Field == e.Field && strings.Contains(r.Message, e.Message)
}

func (e expectResult) String() string {
	return fmt.Sprintf("%s: %s/%s %s: ...%s...", e.Severity, e.Kind, e.Name, e.Field, e.Message)
}

// loadCase reads a case directory: every bind.unkin.net object of its
// *.yaml files, and expect.yaml.
func loadCase(t *testing.T, dir string) (pipeline.Input, expectFile) {
	t.Helper()
	var in pipeline.Input
	for _, it := range testutil.ReadItems(t, dir) {
		if model.IsGroup(it.Source.Ref.APIVersion) {
			in.Items = append(in.Items, it)
		}
	}
	var exp expectFile
	b, err := os.ReadFile(filepath.Join(dir, "expect.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &exp); err != nil {
		t.Fatalf("expect.yaml: %v", err)
	}
	for _, p := range exp.Previous {
		po := prior.Object{Kind: "ConfigMap", Annotations: map[string]string{layout.ZoneStateAnnotation: p.ZoneState}}
		po.Src.Ref.Namespace, po.Src.Ref.Name = p.Namespace, p.Name
		in.Previous = append(in.Previous, po)
	}
	return in, exp
}

func caseDirs(t *testing.T, kind string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", kind, "*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	return dirs
}

// TestBadInputs: each case under testdata/bad produces exactly the results
// its .expected/results.yaml holds (severity, object, file, field path and
// the whole message, in order; go test -update rewrites them, and a changed
// one is reviewed like code), at least one of them an error, and renders
// nothing. Its expect.yaml says why the case is bad.
func TestBadInputs(t *testing.T) {
	dirs := caseDirs(t, "bad")
	if len(dirs) < 60 {
		t.Errorf("only %d bad cases under testdata/bad, want at least 60", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in, exp := loadCase(t, dir)
			objs, rs := pipeline.Run(in, render.Options{Rand: &testutil.DetRand{}})
			if len(exp.Results) > 0 {
				t.Fatalf("%s: expect.yaml lists results; a bad case's are in .expected/results.yaml", exp.Reason)
			}
			golden.Check(t, filepath.Join(dir, ".expected", "results.yaml"), resultsYAML(t, rs))
			if !rs.HasErrors() {
				t.Errorf("%s: no error; a bad case must fail", exp.Reason)
			}
			if objs != nil {
				t.Errorf("objects rendered despite errors")
			}
		})
	}
}

// TestGoodInputs: each case under testdata/good renders with no error and
// no warning (expect.yaml may list info results).
func TestGoodInputs(t *testing.T) {
	dirs := caseDirs(t, "good")
	if len(dirs) == 0 {
		t.Fatal("no good cases")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in, exp := loadCase(t, dir)
			objs, rs := pipeline.Run(in, render.Options{Rand: &testutil.DetRand{}})
			compare(t, exp, rs)
			for _, r := range rs {
				if r.Severity != diag.Info {
					t.Errorf("%s: unexpected %s", exp.Reason, r)
				}
			}
			if len(objs) == 0 {
				t.Errorf("nothing rendered")
			}
		})
	}
}

// goldenResult is one result as results.yaml pins it: all of it.
type goldenResult struct {
	Severity    string         `json:"severity"`
	ResourceRef diag.ObjectRef `json:"resourceRef"`
	// File is the object's file, #index when it is not the first.
	File    string `json:"file,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// resultsYAML is every result of a run, in its order, in full.
func resultsYAML(t *testing.T, rs diag.Results) []byte {
	t.Helper()
	out := []goldenResult{}
	for _, r := range rs {
		file := r.Source.File
		if r.Source.Index > 0 {
			file = fmt.Sprintf("%s#%d", file, r.Source.Index)
		}
		out = append(out, goldenResult{Severity: string(r.Severity), ResourceRef: r.Source.Ref, File: file, Field: r.Field, Message: r.Message})
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func compare(t *testing.T, exp expectFile, rs diag.Results) {
	t.Helper()
	var missing, extra []string
	used := make([]bool, len(rs))
	for _, e := range exp.Results {
		found := false
		for i, r := range rs {
			if !used[i] && e.matches(r) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, e.String())
		}
	}
	for i, r := range rs {
		if !used[i] {
			extra = append(extra, r.String())
		}
	}
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("%s: expected results not produced (-want +got):\n%s", exp.Reason, diff)
	}
	if len(extra) > 0 {
		t.Errorf("%s: unexpected results:\n%s", exp.Reason, strings.Join(extra, "\n"))
	}
}
