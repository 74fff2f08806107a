//go:build tools

// Package tools pins cert-manager's controller (TestCertManagerIssues,
// test/k8s): v1.11.5 is the newest release whose main module builds
// cmd/controller from the Go module proxy (from v1.12 it is a module of
// its own the proxy does not serve).
package tools

import _ "github.com/cert-manager/cert-manager/cmd/controller"
