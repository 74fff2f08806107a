package release

import (
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// startRegistry runs an OCI registry on loopback for the test and returns
// its host:port.
func startRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// TestPushByDigest: hack/push copies a two-architecture layout (as
// hack/image writes for a release) to a registry and prints it by digest;
// that digest pulls back the same index, both platforms in it, and is the
// one hack/image printed.
func TestPushByDigest(t *testing.T) {
	root := bindtools.RepoRoot(t)
	dir := t.TempDir()
	for _, a := range []string{"amd64", "arm64"} {
		if err := os.MkdirAll(filepath.Join(dir, a), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, a, "fn"), []byte("binary for "+a), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	goRun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"run"}, args...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go run %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	layout := filepath.Join(dir, "layout")
	built := strings.Fields(goRun("./hack/image", "-arch", "amd64,arm64", "-bin", filepath.Join(dir, "{arch}", "fn"),
		"-entrypoint", "/fn", "-tag", "example.org/bind-fn/fn:v1", "-layout", layout,
		"-label", "org.opencontainers.image.licenses=Apache-2.0"))
	if len(built) != 3 {
		t.Fatalf("hack/image printed %q, want LAYOUT TAG DIGEST", built)
	}
	reg := startRegistry(t)
	pushed := goRun("./hack/push", "-layout", layout, "-to", reg+"/bind-fn/fn:v1")
	if want := reg + "/bind-fn/fn:v1@" + built[2]; pushed != want {
		t.Fatalf("hack/push printed %q, want %q", pushed, want)
	}
	// Without a tag, the layout's own (what make release-push does: bind9
	// keeps its Debian version).
	if own := goRun("./hack/push", "-layout", layout, "-to", reg+"/other/fn"); own != reg+"/other/fn:v1@"+built[2] {
		t.Errorf("hack/push -to a repository printed %q, want it tagged v1, the layout's tag", own)
	}
	ref, err := name.NewDigest(reg + "/bind-fn/fn@" + built[2])
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatalf("cannot pull %s by digest: %v", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, m := range im.Manifests {
		platforms = append(platforms, m.Platform.String())
	}
	if strings.Join(platforms, " ") != "linux/amd64 linux/arm64" || im.Annotations["org.opencontainers.image.licenses"] != "Apache-2.0" {
		t.Errorf("pulled index: platforms %v, annotations %v; want linux/amd64 linux/arm64 and the licence", platforms, im.Annotations)
	}
}
