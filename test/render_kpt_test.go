package test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/pkgdir"
)

// TestRenderMatchesKpt holds `bind-fn render DIR` to the real `kpt fn
// render --allow-exec DIR` on the examples' Kptfile pipeline: the same
// files, byte for byte.
//
//   - A re-render (the package kpt rendered, rendered again by each): every
//     file, the generated keys and serials carried over included.
//   - An edit (a record changed in the rendered package): every file, the
//     serial bump included.
//   - A first render (the example as committed): the same files, and every
//     file byte for byte except those holding key material a first render
//     generates afresh (Secrets and the DNSSEC DS ConfigMap).
//   - Bad input: bind-fn render exits 1, says where, and writes nothing,
//     as kpt does.
func TestRenderMatchesKpt(t *testing.T) {
	kpt := bindtools.Bin(t, "kpt")
	bindfn := bindtools.Bin(t, "bind-fn")
	kptRender := func(t *testing.T, dir string) { pkgdir.MustRun(t, kpt, "fn", "render", "--allow-exec", dir) }
	bfRender := func(t *testing.T, dir string) { pkgdir.MustRun(t, bindfn, "render", dir) }
	same := func(t *testing.T, what, kptDir, bfDir string, keyed func(string) bool) {
		t.Helper()
		want, got := readPackage(t, kptDir), readPackage(t, bfDir)
		if d := cmp.Diff(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got))); d != "" {
			t.Fatalf("%s: bind-fn render wrote other files than kpt (-kpt +bind-fn):\n%s", what, d)
		}
		compared := 0
		for f, w := range want {
			if keyed(f) {
				continue
			}
			compared++
			if d := cmp.Diff(w, got[f]); d != "" {
				t.Errorf("%s: %s differs (-kpt +bind-fn):\n%s", what, f, d)
			}
		}
		t.Logf("%s: %d files, %d compared byte for byte", what, len(want), compared)
	}
	none := func(string) bool { return false }
	for ex := range expect {
		t.Run(ex, func(t *testing.T) {
			base := kptPackage(t, ex)

			first := pkgdir.CopyTemp(t, base)
			kptRender(t, first)
			bfFirst := pkgdir.CopyTemp(t, base)
			bfRender(t, bfFirst)
			same(t, "first render", first, bfFirst, func(f string) bool {
				b := filepath.Base(f)
				return strings.HasPrefix(b, "secret_") || strings.HasSuffix(b, "-dnssec-ds.yaml")
			})

			again, bfAgain := pkgdir.CopyTemp(t, first), pkgdir.CopyTemp(t, first)
			kptRender(t, again)
			bfRender(t, bfAgain)
			same(t, "re-render", again, bfAgain, none)

			if ex == "authoritative" {
				edit := func(dir string) {
					pkgdir.Replace(t, filepath.Join(dir, "records.yaml"), `"198.51.100.30"`, `"198.51.100.31"`)
				}
				edited, bfEdited := pkgdir.CopyTemp(t, first), pkgdir.CopyTemp(t, first)
				edit(edited)
				edit(bfEdited)
				kptRender(t, edited)
				bfRender(t, bfEdited)
				same(t, "edited record", edited, bfEdited, none)
				if !strings.Contains(readPackage(t, bfEdited)["rendered/auth/configmap_auth-zones-0.yaml"], "198.51.100.31") {
					t.Error("edited record: the new address is in no rendered zone")
				}
			}
		})
	}

	t.Run("BadInput", func(t *testing.T) {
		dir := kptPackage(t, "authoritative")
		pkgdir.Replace(t, filepath.Join(dir, "records.yaml"), `"198.51.100.30"`, `"198.51.100.300"`)
		before := readPackage(t, dir)
		out, code := pkgdir.Run(t, bindfn, "render", dir)
		if code != 1 {
			t.Fatalf("bind-fn render of a bad package: exit %d, want 1\n%s", code, out)
		}
		if want := "spec.values[0]: cannot parse value for type A: 198.51.100.300 is not an IPv4 address (records.yaml:35)"; !strings.Contains(out, "[error]") || !strings.Contains(out, want) {
			t.Errorf("no error result located at the value's file:line (%q) in:\n%s", want, out)
		}
		if d := cmp.Diff(before, readPackage(t, dir)); d != "" {
			t.Errorf("a failed render changed the package (-before +after):\n%s", d)
		}
	})
}
