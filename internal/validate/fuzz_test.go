package validate_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"git.unkin.net/unkin/bind-fn/internal/krm"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz/FuzzPipeline/seed-* from the case directories")

// resourceList wraps the YAML files of a directory into a ResourceList, as
// kpt hands it to a function.
func resourceList(t testing.TB, dir string) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		if filepath.Base(f) == "expect.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			b.WriteString("- ")
			for j, line := range bytes.Split(bytes.TrimRight(doc, "\n"), []byte("\n")) {
				if j > 0 {
					b.WriteString("  ")
				}
				b.Write(line)
				b.WriteByte('\n')
			}
		}
	}
	return b.Bytes()
}

func seedDirs(t testing.TB) []string {
	var dirs []string
	for _, k := range []string{"bad", "good"} {
		d, _ := filepath.Glob(filepath.Join("testdata", k, "*"))
		for _, x := range d {
			if b := filepath.Base(x); b != "zone-too-big" && b != "zone-near-budget" { // 650-800 KiB: they stall the fuzzer
				dirs = append(dirs, x)
			}
		}
	}
	root := bindtools.RepoRoot(t)
	return append(dirs, filepath.Join(root, "examples", "authoritative"), filepath.Join(root, "examples", "resolver"))
}

// FuzzPipeline feeds raw ResourceList bytes through the kpt adapter, in
// render and in validate mode: whatever the input, no panic, and an error
// result means no rendered items.
func FuzzPipeline(f *testing.F) {
	for _, d := range seedDirs(f) {
		f.Add(resourceList(f, d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []krm.Mode{krm.RenderMode, krm.ValidateMode} {
			p := &krm.Processor{Mode: mode, Rand: &testutil.DetRand{}}
			out, err := fn.Run(fn.ResourceListProcessorFunc(p.Process), data)
			if err != nil {
				continue // refused input: fine, as long as nothing panicked
			}
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatalf("output is not a ResourceList: %v\n%s", err, out)
			}
			if hasError(rl) && !bytes.Contains(data, []byte("bind-fn")) && bytes.Contains(out, []byte("managed-by: bind-fn")) {
				t.Fatalf("error results, yet rendered objects in the output:\n%s", out)
			}
		}
	})
}

func hasError(rl *fn.ResourceList) bool {
	for _, r := range rl.Results {
		if r.Severity == fn.Error {
			return true
		}
	}
	return false
}

// TestFuzzSeeds keeps testdata/fuzz/FuzzPipeline/seed-* in step with the
// case directories (go test -run TestFuzzSeeds -update-seeds).
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzPipeline")
	if !*updateSeeds {
		if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) == 0 {
			t.Fatalf("no seed corpus under %s: run go test -run TestFuzzSeeds -update-seeds", dir)
		}
		return
	}
	for _, d := range seedDirs(t) {
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(resourceList(t, d))) + ")\n"
		testutil.WriteFile(t, filepath.Join(dir, "seed-"+filepath.Base(filepath.Dir(d))+"-"+filepath.Base(d)), []byte(body))
	}
}
