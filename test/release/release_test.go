// Package release tests what `make release` and `make release-push` do, end
// to end and offline: the release is built twice (the same digests, the
// same SBOMs), pushed to an OCI registry this test runs on loopback
// (go-containerregistry's pkg/registry), signed with a cosign key pair made
// here, and every image's signature and SBOM attestation verified by digest
// with the real cosign binary (bin/cosign, make tools).
package release

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// version is the release version the test builds; revision its label.
const (
	version  = "v0.0.0-test"
	revision = "0000000000000000000000000000000000000000"
)

// images are the OCI layouts a release writes (out/release/images/).
var images = []string{"bind-fn-agent", "bind9", "fn-render", "fn-validate", "function-bind", "function-bind-runtime"}

func TestReleaseSignedBySHA(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds every release image twice")
	}
	bindtools.RequireRoot(t) // unpacking the arm64 BIND root (mmdebstrap) needs root
	root := bindtools.RepoRoot(t)
	cosign := bindtools.Bin(t, "cosign")
	bindtools.Bin(t, "crossplane")
	bindtools.Bin(t, "cyclonedx")
	bindtools.RequireRelease(t, bindtools.BIND920)

	// Two builds of the same tree: the same references, byte for byte.
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	for _, d := range dirs {
		cmd := exec.Command("bash", filepath.Join(root, "hack", "release.sh"), d, version)
		cmd.Env = append(os.Environ(), "REVISION="+revision)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hack/release.sh %s: %v\n%s", d, err, out)
		}
	}
	first := readFile(t, filepath.Join(dirs[0], "images.yaml"))
	if diff := cmp.Diff(first, readFile(t, filepath.Join(dirs[1], "images.yaml"))); diff != "" {
		t.Errorf("two builds of one tree name different images (-first +second):\n%s", diff)
	}
	for _, n := range images {
		a := readFile(t, filepath.Join(dirs[0], "sbom", n+".cdx.json"))
		if a != readFile(t, filepath.Join(dirs[1], "sbom", n+".cdx.json")) {
			t.Errorf("sbom/%s.cdx.json differs between two builds of one tree", n)
		}
	}
	for _, n := range []string{"bind9", "bind-fn-agent", "fn-render", "fn-validate", "function-bind"} {
		if !strings.Contains(first, "  "+n+": git.unkin.net/unkin/bind-fn/"+n+":") || !strings.Contains(first, "@sha256:") {
			t.Errorf("images.yaml does not name %s by tag and digest:\n%s", n, first)
		}
	}

	// The registry, on loopback, in this process.
	reg := startRegistry(t) + "/bind-fn"

	// A key pair for this run, and one that signed nothing.
	keys := t.TempDir()
	for _, n := range []string{"release", "other"} {
		d := filepath.Join(keys, n)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(cosign, "generate-key-pair")
		cmd.Dir, cmd.Env = d, append(os.Environ(), "COSIGN_PASSWORD=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
		}
	}
	push := exec.Command("bash", filepath.Join(root, "hack", "release-push.sh"), dirs[0], reg, filepath.Join(keys, "release", "cosign.key"))
	push.Env = append(os.Environ(), "COSIGN_PASSWORD=", "COSIGN_FLAGS=--allow-http-registry")
	if out, err := push.CombinedOutput(); err != nil {
		t.Fatalf("hack/release-push.sh: %v\n%s", err, out)
	}

	pushed := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(readFile(t, filepath.Join(dirs[0], "pushed.txt"))), "\n") {
		name, ref, _ := strings.Cut(line, " ")
		pushed[name] = ref
	}
	for _, n := range images {
		ref, ok := pushed[n]
		if !ok {
			t.Errorf("pushed.txt lists no %s", n)
			continue
		}
		_, digest, ok := strings.Cut(ref, "@")
		if !ok {
			t.Errorf("%s pushed as %s, not by digest", n, ref)
			continue
		}
		// images.yaml lists the five images the product names (not the
		// runtime image alone, which only the xpkg carries).
		if want, listed := listedDigest(first, n); listed && want != digest {
			t.Errorf("%s pushed as %s, images.yaml names %s", n, ref, want)
		}
		t.Run(n, func(t *testing.T) {
			verifyRef(t, cosign, filepath.Join(keys, "release", "cosign.pub"), ref, digest)
			sbom := readFile(t, filepath.Join(dirs[0], "sbom", n+".cdx.json"))
			verifySBOM(t, cosign, filepath.Join(keys, "release", "cosign.pub"), ref, sbom)
			// The check can fail: another key's public half verifies nothing.
			if out, err := cosignCmd(cosign, "verify", "--key", filepath.Join(keys, "other", "cosign.pub"), ref); err == nil {
				t.Errorf("cosign verify with a key that signed nothing passed:\n%s", out)
			}
		})
	}
}

// listedDigest is the digest images.yaml names image n by ("  n: repo:tag@sha256:...").
func listedDigest(imagesYAML, n string) (string, bool) {
	for line := range strings.SplitSeq(imagesYAML, "\n") {
		if ref, ok := strings.CutPrefix(line, "  "+n+": "); ok {
			_, d, _ := strings.Cut(ref, "@")
			return d, true
		}
	}
	return "", false
}

func cosignCmd(cosign string, args ...string) ([]byte, error) {
	args = append(args[:1:1], append([]string{"--insecure-ignore-tlog", "--allow-http-registry"}, args[1:]...)...)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(cosign, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return append(stdout.Bytes(), stderr.Bytes()...), err
	}
	return stdout.Bytes(), nil
}

// verifyRef: cosign verify by digest passes, and the signed payload names
// that digest.
func verifyRef(t *testing.T, cosign, pub, ref, digest string) {
	t.Helper()
	out, err := cosignCmd(cosign, "verify", "--key", pub, ref)
	if err != nil {
		t.Fatalf("cosign verify %s: %v\n%s", ref, err, out)
	}
	var sigs []struct {
		Critical struct {
			Image struct {
				Digest string `json:"docker-manifest-digest"`
			} `json:"image"`
		} `json:"critical"`
	}
	if err := json.Unmarshal(out, &sigs); err != nil {
		t.Fatalf("cosign verify printed %q: %v", out, err)
	}
	if len(sigs) == 0 || sigs[0].Critical.Image.Digest != digest {
		t.Errorf("cosign verify %s: signed payloads %+v, want one for %s", ref, sigs, digest)
	}
}

// verifySBOM: the CycloneDX attestation verifies with the key and holds
// the SBOM the release wrote.
func verifySBOM(t *testing.T, cosign, pub, ref, sbom string) {
	t.Helper()
	out, err := cosignCmd(cosign, "verify-attestation", "--key", pub, "--type", "cyclonedx", ref)
	if err != nil {
		t.Fatalf("cosign verify-attestation %s: %v\n%s", ref, err, out)
	}
	var env struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(bytes.SplitN(bytes.TrimSpace(out), []byte("\n"), 2)[0], &env); err != nil {
		t.Fatalf("cosign verify-attestation printed %q: %v", out, err)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var stmt struct {
		PredicateType string          `json:"predicateType"`
		Predicate     json.RawMessage `json:"predicate"`
	}
	if err := json.Unmarshal(payload, &stmt); err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(stmt.Predicate, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(sbom), &want); err != nil {
		t.Fatal(err)
	}
	if stmt.PredicateType != "https://cyclonedx.org/bom" {
		t.Errorf("attestation predicate type %q, want https://cyclonedx.org/bom", stmt.PredicateType)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attested SBOM differs from the release's (-release +attested):\n%s", diff)
	}
}

func readFile(t *testing.T, f string) string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
