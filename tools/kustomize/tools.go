//go:build tools

// Package tools pins the kustomize CLI that the tests and Makefile build into bin/.
package tools

import _ "sigs.k8s.io/kustomize/kustomize/v5"
