//go:build tools

// Package tools pins Crossplane core (the crossplane binary: core start), which
// test/k8s runs against a real kube-apiserver. hack/install-k8s.sh builds it.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crossplane"
