//go:build tools

// Package tools pins the kpt CLI that the tests and Makefile build into bin/.
package tools

import _ "github.com/GoogleContainerTools/kpt"
