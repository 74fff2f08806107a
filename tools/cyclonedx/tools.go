//go:build tools

// Package tools pins cyclonedx-gomod, which writes the CycloneDX SBOM of
// each Go binary the release images hold (make release).
package tools

import _ "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"
