package test

import (
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/pkgdir"
)

// Edits of examples/authoritative, each to one zone. apps.example.com and
// example.com of the external view are neighbours in the zones ConfigMap
// (db.external_apps.example.com, then db.external_example.com), and the
// shop records are the last lines of apps.example.com's file: the two
// edits touch lines as close as two zones' lines come.
var (
	editApps = func(t *testing.T, dir string) { // apps.example.com, its last lines
		pkgdir.Replace(t, filepath.Join(dir, "records.yaml"), `["198.51.100.120", "198.51.100.121"]`, `["198.51.100.122", "198.51.100.123"]`)
	}
	editBlog = func(t *testing.T, dir string) { // example.com (view external)
		pkgdir.Replace(t, filepath.Join(dir, "records.yaml"), `"198.51.100.30"`, `"198.51.100.31"`)
	}
	editPhone = func(t *testing.T, dir string) { // example.com again, another record (sip)
		pkgdir.Replace(t, filepath.Join(dir, "zones.yaml"), `"198.51.100.60"`, `"198.51.100.61"`)
	}
)

// TestStateMerges: the rendered output of two branches that changed two
// zones merges with plain `git merge` (the real git), and the merged tree is
// byte for byte what rendering both changes at once gives — each zone's
// serial is its own file, not a line every zone shares
// (docs/state.md). Two branches that changed the same zone conflict in that
// zone's lines only; taking either side and rendering again gives the
// combined render, that zone's serial one above both sides'.
func TestStateMerges(t *testing.T) {
	bindfn := bindtools.Bin(t, "bind-fn")
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("this test merges with the real git, which is not on PATH: %v", err)
	}
	render := func(t *testing.T, dir string) { pkgdir.MustRun(t, bindfn, "render", dir) }
	git := func(t *testing.T, dir string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(gitBin, append([]string{"-C", dir, "-c", "user.name=bind-fn test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	mustGit := func(t *testing.T, dir string, args ...string) string {
		t.Helper()
		out, err := git(t, dir, args...)
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	root := bindtools.RepoRoot(t)
	// base: the example rendered once, committed.
	base := filepath.Join(t.TempDir(), "pkg")
	pkgdir.Copy(t, filepath.Join(root, "examples", "authoritative"), base)
	render(t, base)
	mustGit(t, base, "init", "-q", "-b", "main")
	mustGit(t, base, "add", "-A")
	mustGit(t, base, "commit", "-q", "-m", "base")
	// branch edits, renders and commits on its own branch from main.
	branch := func(t *testing.T, repo, name string, edits ...func(*testing.T, string)) {
		mustGit(t, repo, "checkout", "-q", "-b", name, "main")
		for _, e := range edits {
			e(t, repo)
		}
		render(t, repo)
		mustGit(t, repo, "commit", "-q", "-a", "-m", name)
	}
	// combined renders both edits at once on a copy of the base.
	combined := func(t *testing.T, edits ...func(*testing.T, string)) map[string]string {
		dir := filepath.Join(t.TempDir(), "pkg")
		pkgdir.Copy(t, base, dir)
		for _, e := range edits {
			e(t, dir)
		}
		render(t, dir)
		return packageFiles(t, dir)
	}
	sameTree := func(t *testing.T, what string, want, got map[string]string) {
		t.Helper()
		if d := cmp.Diff(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got))); d != "" {
			t.Fatalf("%s: other files than the combined render (-want +got):\n%s", what, d)
		}
		for f, w := range want {
			if d := cmp.Diff(w, got[f]); d != "" {
				t.Errorf("%s: %s differs from rendering both changes at once (-want +got):\n%s", what, f, d)
			}
		}
	}

	t.Run("two zones", func(t *testing.T) {
		repo := filepath.Join(t.TempDir(), "repo")
		pkgdir.Copy(t, base, repo)
		branch(t, repo, "apps", editApps)
		branch(t, repo, "blog", editBlog)
		if out, err := git(t, repo, "merge", "--no-edit", "apps"); err != nil {
			conflicted, _ := git(t, repo, "diff", "--name-only", "--diff-filter=U")
			t.Fatalf("git merge of two branches that changed two zones: %v\n%s\nconflicted files:\n%s", err, out, conflicted)
		}
		want := combined(t, editApps, editBlog)
		sameTree(t, "merged tree", want, packageFiles(t, repo))
		render(t, repo)
		sameTree(t, "merged tree rendered again", want, packageFiles(t, repo))
	})

	t.Run("one zone", func(t *testing.T) {
		repo := filepath.Join(t.TempDir(), "repo")
		pkgdir.Copy(t, base, repo)
		branch(t, repo, "blog", editBlog)
		branch(t, repo, "sip", editPhone)
		out, err := git(t, repo, "merge", "--no-edit", "blog")
		if err == nil {
			t.Fatalf("git merge of two changes to one zone's serial did not conflict:\n%s", out)
		}
		conflicted := strings.Fields(mustGit(t, repo, "diff", "--name-only", "--diff-filter=U"))
		const zones = "rendered/auth/configmap_auth-zones-0.yaml"
		if d := cmp.Diff([]string{zones}, conflicted); d != "" {
			t.Fatalf("conflicted files (-want +got):\n%s\n%s", d, out)
		}
		// Every conflict hunk lies inside the zone's own value: after its
		// key line, before the next key.
		b, err := os.ReadFile(filepath.Join(repo, zones))
		if err != nil {
			t.Fatal(err)
		}
		key := ""
		for i, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") && strings.HasSuffix(l, ": |") {
				key = strings.TrimSuffix(strings.TrimSpace(l), ": |")
			}
			for _, m := range []string{"<<<<<<<", "=======", ">>>>>>>"} {
				if strings.HasPrefix(l, m) && key != "db.external_example.com" {
					t.Errorf("%s:%d: conflict marker %q outside example.com's lines (in %q)", zones, i+1, m, key)
				}
			}
		}
		// Resolved the documented way: either side, then render again.
		want := combined(t, editBlog, editPhone)
		for _, side := range []string{"--ours", "--theirs"} {
			t.Run(side, func(t *testing.T) {
				mustGit(t, repo, "checkout", side, "--", zones)
				render(t, repo)
				got := packageFiles(t, repo)
				// Both sides served serial 2 for example.com with other data:
				// the merge is 3, the combined render (never merged) 2.
				w := maps.Clone(want)
				w[zones] = strings.Replace(w[zones], "hostmaster.example.com. 2 300", "hostmaster.example.com. 3 300", 1)
				if w[zones] == want[zones] {
					t.Fatal("the combined render has no serial 2 for example.com")
				}
				sameTree(t, "resolved with "+side, w, got)
			})
		}
	})
}

// packageFiles reads every file of a package directory, .git left out.
func packageFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
