//go:build tools

// Package tools pins sops, which the kubelet cluster test runs to prove the
// SOPS recipe of docs/security.md: a Secret encrypted for an age key,
// decrypted and applied apart from the rendered package.
package tools

import _ "github.com/getsops/sops/v3/cmd/sops"
