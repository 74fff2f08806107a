package model_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
)

// TestDefaultImageFollowsPin: the default BIND image is the one
// hack/bind-image.sh builds from the pinned Debian trixie packages
// (tools/bind9.20/version), the release every real-BIND test runs, so
// moving the pin without the default (or the reverse) fails here.
func TestDefaultImageFollowsPin(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "tools", "bind9.20", "version"))
	if err != nil {
		t.Fatal(err)
	}
	ver := strings.TrimSpace(string(b))
	if _, after, ok := strings.Cut(ver, ":"); ok { // the Debian epoch is not part of the tag
		ver = after
	}
	want := "git.unkin.net/unkin/bind-fn/bind9:" + strings.ReplaceAll(ver, "~", "-")
	tagged, _, _ := strings.Cut(model.DefaultImage, "@") // a release adds the digest
	if tagged != want {
		t.Errorf("DefaultImage = %q, want %q (tools/bind9.20/version); see tools/bind9.20/README.md", model.DefaultImage, want)
	}
	if !strings.HasPrefix(ver, "9.20.") {
		t.Errorf("tools/bind9.20/version = %q is not a 9.20 release", ver)
	}
}
