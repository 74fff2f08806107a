package kubeletdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteSwapsAtomically(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, map[string][]byte{"a": []byte("1"), "b": []byte("2")}); err != nil {
		t.Fatal(err)
	}
	first, _ := os.Readlink(filepath.Join(dir, "..data"))
	if err := Write(dir, map[string][]byte{"a": []byte("3")}); err != nil {
		t.Fatal(err)
	}
	second, _ := os.Readlink(filepath.Join(dir, "..data"))
	if first == second {
		t.Error("..data must point at a new directory after an update")
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Error("the old payload directory must be removed")
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a"))
	if diff := cmp.Diff("3", string(got)); diff != "" {
		t.Errorf("content through the visible link (-want +got):\n%s", diff)
	}
	if _, err := os.Lstat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
		t.Error("a removed key's link must go")
	}
	if link, _ := os.Readlink(filepath.Join(dir, "a")); link != filepath.Join("..data", "a") {
		t.Errorf("visible link = %q, want ..data/a", link)
	}
}
