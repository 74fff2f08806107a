// Command push copies the image index of an OCI layout (hack/image -layout)
// to a registry and prints the reference it now has by digest, which is
// what a release signs and names:
//
//	push -layout out/release/images/fn-render -to registry.example/bind-fn/fn-render:v1.2.3
//	registry.example/bind-fn/fn-render:v1.2.3@sha256:...
//	push -layout out/release/images/bind9 -to registry.example/bind-fn/bind9   # the layout's own tag
//
// Plain HTTP is used for registries on loopback only (go-containerregistry's
// rule), as the tests' in-process registry is. Credentials, if the registry
// wants them: REGISTRY_USERNAME and REGISTRY_PASSWORD.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "push:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	dir := fs.String("layout", "", "OCI layout holding one image index (required)")
	to := fs.String("to", "", "destination REPOSITORY:TAG, or REPOSITORY to keep the layout's own tag (its index.json's ref.name)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *to == "" {
		return errors.New("-layout and -to are required")
	}
	p, err := layout.FromPath(*dir)
	if err != nil {
		return fmt.Errorf("cannot read layout %s: %w", *dir, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return err
	}
	if len(m.Manifests) != 1 {
		return fmt.Errorf("cannot push %s: its index.json lists %d manifests, want the one image index hack/image writes", *dir, len(m.Manifests))
	}
	dest := *to
	if _, err := name.NewTag(dest, name.StrictValidation); err != nil {
		own, err := name.NewTag(m.Manifests[0].Annotations["org.opencontainers.image.ref.name"], name.StrictValidation)
		if err != nil {
			return fmt.Errorf("cannot push %s to %q: give -to a tag; the layout names none (%v)", *dir, *to, err)
		}
		dest += ":" + own.TagStr()
	}
	ref, err := name.NewTag(dest, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("cannot parse -to %q: %w", dest, err)
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return fmt.Errorf("cannot read the image index of %s: %w", *dir, err)
	}
	auth := authn.Anonymous
	if u := os.Getenv("REGISTRY_USERNAME"); u != "" {
		auth = &authn.Basic{Username: u, Password: os.Getenv("REGISTRY_PASSWORD")}
	}
	if err := remote.WriteIndex(ref, idx, remote.WithAuth(auth)); err != nil {
		return fmt.Errorf("cannot push %s to %s: %w", *dir, ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s@%s\n", ref.String(), d)
	return nil
}
