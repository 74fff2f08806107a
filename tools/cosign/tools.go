//go:build tools

// Package tools pins cosign, which signs the release images and attaches
// their SBOMs (make release), and verifies both by digest in the tests.
package tools

import _ "github.com/sigstore/cosign/v2/cmd/cosign"
