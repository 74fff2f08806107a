//go:build tools

// Package tools pins the kube-score CLI that `make kube-score` (part of make
// test) builds into bin/ and runs on the rendered examples.
package tools

import _ "github.com/zegl/kube-score/cmd/kube-score"
