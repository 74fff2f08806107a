//go:build tools

// Package tools pins the staticcheck linter that `make lint` builds into bin/.
package tools

import _ "honnef.co/go/tools/cmd/staticcheck"
