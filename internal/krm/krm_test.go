package krm_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"

	"git.unkin.net/unkin/bind-fn/internal/krm"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

func process(t *testing.T, mode krm.Mode, in []byte) (*fn.ResourceList, error) {
	t.Helper()
	p := &krm.Processor{Mode: mode, Rand: &testutil.DetRand{}}
	out, err := fn.Run(fn.ResourceListProcessorFunc(p.Process), in)
	rl, perr := fn.ParseResourceList(out)
	if perr != nil {
		t.Fatalf("cannot parse output: %v\n%s", perr, out)
	}
	return rl, err
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type loc struct{ Kind, Name, Field, File, Fragment string }

// TestLocatedErrors: every user error names the object, the field path and
// the file, and nothing is generated.
func TestLocatedErrors(t *testing.T) {
	in := read(t, "errors.yaml")
	for _, mode := range []krm.Mode{krm.RenderMode, krm.ValidateMode} {
		rl, err := process(t, mode, in)
		if err == nil {
			t.Fatalf("mode %d: want a failure", mode)
		}
		want := map[string]loc{
			"unknown field": {"BindCluster", "auth", "spec.replica", "cluster.yaml", `unknown field "replica"`},
			"bad value":     {"BindZone", "example-com", "spec.records[0].values[1]", "zones.yaml", "not-an-address"},
			"dangling ref":  {"DNSRecord", "orphan", "spec.zoneRef", "records.yaml", `BindZone "example-org"`},
		}
		for name, w := range want {
			found := false
			for _, r := range rl.Results {
				if r.ResourceRef == nil || r.Field == nil || r.File == nil {
					continue
				}
				got := loc{r.ResourceRef.Kind, r.ResourceRef.Name, r.Field.Path, r.File.Path, w.Fragment}
				if got == w && strings.Contains(r.Message, w.Fragment) && r.Severity == fn.Error {
					found = true
				}
			}
			if !found {
				t.Errorf("mode %d: %s: no result %+v in:\n%v", mode, name, w, rl.Results)
			}
		}
		if len(rl.Items) != 3 {
			t.Errorf("mode %d: items changed on error: %d items, want the 3 inputs", mode, len(rl.Items))
		}
		for _, it := range rl.Items {
			if it.IsLocalConfig() {
				t.Errorf("mode %d: %s marked local-config although nothing was rendered", mode, it.GetName())
			}
		}
	}
}

// TestOperatorManifests: manifests written for the old operator, status
// and all, decode and render.
func TestOperatorManifests(t *testing.T) {
	rl, err := process(t, krm.RenderMode, read(t, "operator-manifests.yaml"))
	if err != nil {
		t.Fatalf("render failed: %v\n%v", err, rl.Results)
	}
	var kinds []string
	for _, it := range rl.Items {
		if it.GetAnnotation("config.kubernetes.io/local-config") != "true" {
			kinds = append(kinds, it.GetKind()+"/"+it.GetName())
		}
	}
	sort.Strings(kinds)
	want := []string{
		"ConfigMap/auth-config", "ConfigMap/auth-zones-0", "PodDisruptionBudget/auth", "Role/auth-agent", "RoleBinding/auth-agent",
		"Secret/auth-keys", "Secret/externaldns-key-tsig", "Service/auth", "Service/auth-headless", "Service/auth-primary",
		"ServiceAccount/auth-agent", "StatefulSet/auth",
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("rendered objects (-want +got):\n%s", diff)
	}
}

// TestIdempotent: running on its own output changes nothing.
func TestIdempotent(t *testing.T) {
	in := read(t, "operator-manifests.yaml")
	rl, err := process(t, krm.RenderMode, in)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := rl.ToYAML()
	rl2, err := process(t, krm.RenderMode, first)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := rl2.ToYAML()
	if diff := cmp.Diff(string(first), string(second)); diff != "" {
		t.Errorf("second run changed the output:\n%s", diff)
	}
}

// TestDuplicateField: a key set twice in an input is a located error on
// both paths (the cutter and the SDK's), not a silent last-one-wins; a
// duplicate in an object that is not ours is passed through untouched.
func TestDuplicateField(t *testing.T) {
	in := read(t, "duplicate.yaml")
	want := loc{"BindZone", "example-com", "spec.records", "zones.yaml", `duplicate field "records"`}
	paths := map[string]func(p *krm.Processor) ([]byte, error){
		"cut": func(p *krm.Processor) ([]byte, error) { return p.Run(in) },
		"sdk": func(p *krm.Processor) ([]byte, error) {
			return fn.Run(fn.ResourceListProcessorFunc(p.Process), in)
		},
	}
	for name, run := range paths {
		for _, mode := range []krm.Mode{krm.RenderMode, krm.ValidateMode} {
			out, err := run(&krm.Processor{Mode: mode, Rand: &testutil.DetRand{}})
			if err == nil {
				t.Errorf("%s mode %d: want a failure", name, mode)
			}
			rl, perr := fn.ParseResourceList(out)
			if perr != nil {
				t.Fatalf("%s: cannot parse output: %v\n%s", name, perr, out)
			}
			var got []loc
			for _, r := range rl.Results {
				if r.Severity != fn.Error || r.ResourceRef == nil || r.Field == nil || r.File == nil {
					continue
				}
				l := loc{r.ResourceRef.Kind, r.ResourceRef.Name, r.Field.Path, r.File.Path, want.Fragment}
				if strings.Contains(r.Message, want.Fragment) {
					got = append(got, l)
				}
			}
			if diff := cmp.Diff([]loc{want}, got); diff != "" {
				t.Errorf("%s mode %d: duplicate-field results (-want +got):\n%s\nall: %v", name, mode, diff, rl.Results)
			}
			if len(rl.Items) != 3 {
				t.Errorf("%s mode %d: %d items, want the 3 inputs unchanged", name, mode, len(rl.Items))
			}
		}
	}
}
