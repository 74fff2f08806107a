package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/pkgdir"
)

// kubeScoreAllow is one accepted kube-score finding (docs/kube-score-allowlist.yaml).
type kubeScoreAllow struct {
	// Check is kube-score's check ID (container-resources, ...).
	Check string `json:"check"`
	// Object is Kind/name, a path.Match pattern (Service/*-primary).
	Object string `json:"object"`
	// Reason says why bind-fn keeps what kube-score flags.
	Reason string `json:"reason"`
}

// kubeScoreObject is one object of `kube-score score -o json`.
type kubeScoreObject struct {
	TypeMeta struct {
		Kind string `json:"kind"`
	} `json:"type_meta"`
	ObjectMeta struct {
		Name string `json:"name"`
	} `json:"object_meta"`
	Checks []struct {
		Check struct {
			ID string `json:"id"`
		} `json:"check"`
		Grade    int  `json:"grade"`
		Skipped  bool `json:"skipped"`
		Comments []struct {
			Path    string `json:"path"`
			Summary string `json:"summary"`
		} `json:"comments"`
	} `json:"checks"`
}

// kubeScoreOK is kube-score's grade for a check that passed (AllOK).
const kubeScoreOK = 10

// TestKubeScore runs the real kube-score (bin/kube-score, pinned in
// tools/kube-score) on what `bind-fn render` writes for both examples. Every
// finding (a check graded below AllOK) must be listed with its reason in
// docs/kube-score-allowlist.yaml, and every listed finding must still occur:
// a fixed finding leaves no stale excuse behind.
func TestKubeScore(t *testing.T) {
	kubeScore := bindtools.Bin(t, "kube-score")
	bindfn := bindtools.Bin(t, "bind-fn")
	allowFile := filepath.Join(bindtools.RepoRoot(t), "docs", "kube-score-allowlist.yaml")
	b, err := os.ReadFile(allowFile)
	if err != nil {
		t.Fatal(err)
	}
	var allow []kubeScoreAllow
	if err := yaml.UnmarshalStrict(b, &allow); err != nil {
		t.Fatalf("%s: %v", allowFile, err)
	}
	for i, a := range allow {
		if a.Check == "" || a.Object == "" || strings.TrimSpace(a.Reason) == "" {
			t.Fatalf("%s: entry %d (%s %s) needs check, object and reason", allowFile, i, a.Check, a.Object)
		}
	}
	used := make([]bool, len(allow))
	var unlisted []string
	for _, ex := range []string{"authoritative", "resolver"} {
		dir := pkgdir.CopyTemp(t, filepath.Join(bindtools.RepoRoot(t), "examples", ex))
		pkgdir.MustRun(t, bindfn, "render", dir)
		var files []string
		err := filepath.Walk(filepath.Join(dir, "rendered"), func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && strings.HasSuffix(p, ".yaml") {
				files = append(files, p)
			}
			return err
		})
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no rendered objects (%v)", ex, err)
		}
		sort.Strings(files)
		cmd := exec.Command(kubeScore, append([]string{"score", "--output-format", "json"}, files...)...)
		out, err := cmd.Output()
		// kube-score exits 1 when it has critical findings: the JSON says which.
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
			t.Fatalf("%s: kube-score: %v\n%s", ex, err, ee.Stderr)
		}
		var objs []kubeScoreObject
		if err := json.Unmarshal(out, &objs); err != nil {
			t.Fatalf("%s: kube-score output: %v\n%s", ex, err, out)
		}
		if len(objs) == 0 {
			t.Fatalf("%s: kube-score scored no objects", ex)
		}
		for _, o := range objs {
			obj := o.TypeMeta.Kind + "/" + o.ObjectMeta.Name
			for _, c := range o.Checks {
				if c.Skipped || c.Grade >= kubeScoreOK {
					continue
				}
				matched := false
				for i, a := range allow {
					if ok, _ := path.Match(a.Object, obj); ok && a.Check == c.Check.ID {
						used[i], matched = true, true
					}
				}
				if !matched {
					var why []string
					for _, cm := range c.Comments {
						why = append(why, strings.TrimSpace(cm.Path+" "+cm.Summary))
					}
					unlisted = append(unlisted, fmt.Sprintf("%s: %s %s (grade %d): %s", ex, c.Check.ID, obj, c.Grade, strings.Join(why, "; ")))
				}
			}
		}
	}
	for _, u := range unlisted {
		t.Errorf("kube-score finding not in docs/kube-score-allowlist.yaml: %s\n\tfix the rendered object, or list the finding with its reason", u)
	}
	for i, a := range allow {
		if !used[i] {
			t.Errorf("docs/kube-score-allowlist.yaml: %s on %s no longer occurs in either example: remove the entry", a.Check, a.Object)
		}
	}
}
