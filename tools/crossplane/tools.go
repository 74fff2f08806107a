//go:build tools

// Package tools pins the crossplane CLI that the tests and Makefile build into bin/.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crank"
