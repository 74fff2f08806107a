package krm

import (
	"fmt"
	"io"

	"git.unkin.net/unkin/bind-fn/internal/version"
)

// Exit codes of the KRM functions (and, for usage errors, of every bind-fn
// binary).
const (
	ExitOK    = 0  // no error result
	ExitError = 1  // an error result, or input that is no ResourceList
	ExitUsage = 64 // an unknown flag or argument (sysexits' EX_USAGE: 2 is plan's "a DNS change")
)

// Args reads a KRM function's command line before anything reads stdin:
// --help and --version answer and exit 0; a flag or argument the function
// does not take is a usage error, one line and a hint, exit 64. A function
// takes its configuration from the ResourceList, so with no arguments it
// goes on (run is false only when the process should exit with code).
func Args(name, summary string, args []string, stdout, stderr io.Writer) (code int, run bool) {
	if len(args) == 0 {
		return 0, true
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stdout, usageText, name, summary)
		return ExitOK, false
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, version.Line(name))
		return ExitOK, false
	}
	fmt.Fprintf(stderr, "%s: error: unexpected argument %q: a KRM function reads its input and configuration from the ResourceList on stdin\nRun \"%s --help\" for usage.\n", name, args[0], name)
	return ExitUsage, false
}

const usageText = `Usage: %s [--help | --version] < ResourceList > ResourceList

%s

A KRM function: kpt (kpt fn render, kpt fn eval --exec) and kustomize
(an exec transformer) run it with a ResourceList on stdin, and it writes the
ResourceList, with its results, on stdout. Each result names the object, the
field path and the file (file:line when the function can read the package).

Flags:
  -h, --help     Show this help and exit.
      --version  Print the version and exit.

Exit codes:
  0  no error result
  1  an error result (the items are left unchanged), or input that is no ResourceList
  64 a usage error: an unknown flag or argument

Exit codes, locations and versions: docs/cli.md; the checks: docs/validation.md.
`
