package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

// badFiles are the files of examples/bad, each holding one typical mistake,
// and a fragment of the result each must draw.
var badFiles = map[string]string{
	"cluster.yaml":     `spec.extraOptions[1]: cannot set "allow-transfer" in extraOptions`,
	"zone.yaml":        `spec.allowTransfer[0]: cannot use TSIG key "partner-key"`,
	"apex-ns.yaml":     `spec.name: an apex NS RRset cannot be set here`,
	"cname.yaml":       `spec.name: a CNAME at www.example.com. cannot share its name`,
	"dynamic.yaml":     `spec.updateKeyRef: cannot accept dynamic updates`,
	"record.yaml":      `spec.values[0]: cannot parse value for type A`,
	"mx.yaml":          `spec.values[0]: cannot use "192.0.2.25" as a name in this MX value: it is an IP address`,
	"missing-dot.yaml": `spec.name: cannot use "mail.example.com" as the owner name`,
}

// TestKptBadPackage: the real kpt CLI on examples/bad exits non-zero,
// prints every result with its field path and file, and writes nothing;
// the results.yaml it writes is pinned whole in examples/bad/.expected
// (go test ./test -run TestKptBadPackage -update rewrites it).
func TestKptBadPackage(t *testing.T) {
	kpt := bindtools.Bin(t, "kpt")
	dir := kptPackage(t, "bad")
	before := readPackage(t, dir)
	results := t.TempDir()
	cmd := exec.Command(kpt, "fn", "render", "--allow-exec", "--truncate-output=false", "--results-dir", results, dir)
	cmd.Dir = filepath.Dir(dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("kpt fn render succeeded on a bad package:\n%s", out)
	}
	for file, frag := range badFiles {
		found := false
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "[error]") && strings.Contains(line, frag) && strings.Contains(line, "("+file) {
				found = true
			}
		}
		if !found {
			t.Errorf("kpt output lacks an error for %s (%q):\n%s", file, frag, out)
		}
	}
	if diff := cmp.Diff(before, readPackage(t, dir)); diff != "" {
		t.Errorf("kpt changed the bad package (-before +after):\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(results, "results.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for file := range badFiles {
		if !bytes.Contains(b, []byte("path: "+file)) {
			t.Errorf("results.yaml has no result with file path %s", file)
		}
	}
	// Every result in full, as the kpt catalog pins them: the functions'
	// paths are this checkout's, so they are written as bin/<name>.
	for _, name := range []string{"fn-validate", "fn-render"} {
		b = bytes.ReplaceAll(b, []byte(bindtools.Bin(t, name)), []byte("bin/"+name))
	}
	golden.Check(t, filepath.Join(bindtools.RepoRoot(t), "examples", "bad", ".expected", "results.yaml"), b)
}

// TestFnValidateAlone: bin/fn-validate on a ResourceList with errors exits
// non-zero, and every result names the object, the field and the file.
func TestFnValidateAlone(t *testing.T) {
	bin := bindtools.Bin(t, "fn-validate")
	root := bindtools.RepoRoot(t)
	var in bytes.Buffer
	in.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	var files []string
	for f := range badFiles {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, "examples", "bad", f))
		if err != nil {
			t.Fatal(err)
		}
		items, err := testutil.DecodeItems(f, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			o, err := fn.ParseKubeObject(it.JSON)
			if err != nil {
				t.Fatal(err)
			}
			if err := o.SetAnnotation(fn.PathAnnotation, f); err != nil {
				t.Fatal(err)
			}
			in.WriteString("- ")
			in.WriteString(strings.ReplaceAll(strings.TrimRight(o.String(), "\n"), "\n", "\n  "))
			in.WriteString("\n")
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("fn-validate exited 0 on input with errors:\n%s", stdout.String())
	}
	rl, err := fn.ParseResourceList(stdout.Bytes())
	if err != nil {
		t.Fatalf("cannot parse fn-validate output: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if len(rl.Results) < len(badFiles) {
		t.Fatalf("fn-validate gave %d results, want at least %d:\n%s", len(rl.Results), len(badFiles), stdout.String())
	}
	seen := map[string]bool{}
	for _, r := range rl.Results {
		if r.ResourceRef == nil || r.Field == nil || r.Field.Path == "" || r.File == nil || r.File.Path == "" {
			t.Errorf("result without resourceRef, field.path or file.path: %+v", r)
			continue
		}
		seen[r.File.Path] = true
	}
	for f := range badFiles {
		if !seen[f] {
			t.Errorf("no result names file %s", f)
		}
	}
}
