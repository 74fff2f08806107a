// Package test holds end-to-end tests that drive the real CLIs users run —
// kustomize, kpt — against the built functions in bin/ (make build).
package test
