//go:build tools

// Package tools pins age-keygen, which makes the age key the SOPS recipe of
// docs/security.md encrypts for (the kubelet cluster test runs it).
package tools

import _ "filippo.io/age/cmd/age-keygen"
