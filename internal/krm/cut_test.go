package krm_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/krm"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// normalised is a ResourceList reduced to what it means: every item as a
// generic map, in order, and the results.
type normalised struct {
	Items   []map[string]any
	FC      map[string]any
	Results fn.Results
}

func normalise(t *testing.T, out []byte) normalised {
	t.Helper()
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		t.Fatalf("cannot parse output: %v\n%s", err, out)
	}
	var n normalised
	for _, o := range rl.Items {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(o.String()), &m); err != nil {
			t.Fatal(err)
		}
		n.Items = append(n.Items, m)
	}
	if !rl.FunctionConfig.IsEmpty() {
		if err := yaml.Unmarshal([]byte(rl.FunctionConfig.String()), &n.FC); err != nil {
			t.Fatal(err)
		}
	}
	n.Results = rl.Results
	return n
}

// withoutResults drops a ResourceList's results (kpt does not feed a
// function's results back to it).
func withoutResults(t *testing.T, out []byte) []byte {
	t.Helper()
	if i := bytes.Index(out, []byte("\nresults:\n")); i >= 0 {
		return out[:i+1]
	}
	return out
}

// TestCutMatchesSDK: Processor.Run (the cutting codec fn-render and
// fn-validate use) means exactly what fn.Run(Processor.Process) means, on
// every input shape, in both modes, on success and on failure.
func TestCutMatchesSDK(t *testing.T) {
	ex, err := os.ReadFile(filepath.Join("testdata", "operator-manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := (&krm.Processor{Mode: krm.RenderMode, Rand: &testutil.DetRand{}}).Run(ex)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		in     []byte
	}{
		"Shapes":   {reason: "indented items, comments, block scalars, annotation shapes, functionConfig", in: read(t, "cut-shapes.yaml")},
		"Operator": {reason: "the operator's manifests", in: ex},
		"Errors":   {reason: "located errors: nothing changes", in: read(t, "errors.yaml")},
		"Previous": {reason: "its own output back: the previous render is replaced, Secrets kept", in: withoutResults(t, first)},
		"Generated": {reason: "a generated package with views and DNSRecords",
			in: gen.Generate(gen.Options{Zones: 9, Records: 900, Seed: 3, Views: 2}).ResourceList()},
		"Duplicate": {reason: "a key set twice in an input: a located error", in: read(t, "duplicate.yaml")},
		"Empty":     {reason: "no items", in: []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n")},
		"JSON":      {reason: "not block YAML: the SDK path", in: []byte(`{"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList","items":[]}`)},
	}
	for name, tc := range cases {
		for _, mode := range []krm.Mode{krm.RenderMode, krm.ValidateMode} {
			sdkP := &krm.Processor{Mode: mode, Rand: &testutil.DetRand{}}
			want, werr := fn.Run(fn.ResourceListProcessorFunc(sdkP.Process), tc.in)
			got, gerr := (&krm.Processor{Mode: mode, Rand: &testutil.DetRand{}}).Run(tc.in)
			if (werr == nil) != (gerr == nil) {
				t.Errorf("%s mode %d: %s: error %v, the SDK's %v", name, mode, tc.reason, gerr, werr)
			}
			if diff := cmp.Diff(normalise(t, want), normalise(t, got)); diff != "" {
				t.Errorf("%s mode %d: %s: output differs from the SDK's (-sdk +cut):\n%s", name, mode, tc.reason, diff)
			}
		}
	}
}

// TestCutIdempotent: the cutting path on its own output changes
// nothing (byte for byte).
func TestCutIdempotent(t *testing.T) {
	p := func() *krm.Processor { return &krm.Processor{Mode: krm.RenderMode, Rand: &testutil.DetRand{}} }
	first, err := p().Run(read(t, "operator-manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := p().Run(withoutResults(t, first))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(withoutResults(t, first)), string(withoutResults(t, second))); diff != "" {
		t.Errorf("second run changed the output:\n%s", diff)
	}
}
