//go:build tools

// Package tools pins the controller-gen CLI that the tests and Makefile build into bin/.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
