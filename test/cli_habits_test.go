package test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/pkgdir"
)

// badPackage is internal/plan/testdata/base with one address that is not
// one (records.yaml:35, DNSRecord dns/blog spec.values[0]).
func badPackage(t *testing.T) (dir, base string) {
	t.Helper()
	base = filepath.Join("..", "internal", "plan", "testdata", "base")
	dir = pkgdir.CopyTemp(t, base)
	pkgdir.Replace(t, filepath.Join(dir, "records.yaml"), `"198.51.100.30"`, `"198.51.100.300"`)
	return dir, base
}

// brokenPackage is base with a file that is no YAML: an open flow
// sequence on its line 6.
func brokenPackage(t *testing.T, base string) string {
	t.Helper()
	dir := pkgdir.CopyTemp(t, base)
	pkgdir.Replace(t, filepath.Join(dir, "records.yaml"), `values: ["198.51.100.30"]`, `values: ["198.51.100.30"`)
	return dir
}

// resourceList is dir as kpt hands it to a function: every object with its
// path, index and package-path annotations, in a ResourceList.
func resourceList(t *testing.T, dir string) []byte {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := (&kio.LocalPackageReader{PackagePath: abs, SetAnnotations: map[string]string{"internal.config.kubernetes.io/package-path": abs}}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := (kio.ByteWriter{Writer: &b, KeepReaderAnnotations: true, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}).Write(nodes); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCLIHabits: every binary answers --help and --version with exit 0 and
// on stdout, refuses a usage error with exit 64 (the agent, inside the pod: 2) in one line and a hint to
// --help (not the whole help), and names a bad value with what it should
// be, at the file:line of the field, the same in render, plan, fn-render
// and fn-validate.
func TestCLIHabits(t *testing.T) {
	bad, base := badPackage(t)
	broken := brokenPackage(t, base)
	rl := resourceList(t, bad)
	const badValue = "spec.values[0]: cannot parse value for type A: 198.51.100.300 is not an IPv4 address"
	const located = "(records.yaml:35)"
	type want struct {
		code   int
		stdout []string // substrings
		stderr []string
		lines  int // stderr's exact line count, when not 0
	}
	cases := map[string]struct {
		reason string
		bin    string
		args   []string
		stdin  []byte
		want   want
	}{
		"bind-fn/help":            {reason: "--help: usage on stdout, exit 0", bin: "bind-fn", args: []string{"--help"}, want: want{stdout: []string{"Usage: bind-fn <command>", "Exit codes:"}}},
		"bind-fn/version":         {reason: "--version: name and version", bin: "bind-fn", args: []string{"--version"}, want: want{stdout: []string{"bind-fn dev ("}}},
		"bind-fn/version-command": {reason: "bind-fn version says the same", bin: "bind-fn", args: []string{"version"}, want: want{stdout: []string{"bind-fn dev ("}}},
		"bind-fn/usage": {reason: "an unknown flag: exit 64, one line and a hint",
			bin: "bind-fn", args: []string{"--bogus"}, want: want{code: 64, stderr: []string{"bind-fn: error: unknown flag --bogus\n", `Run "bind-fn --help" for usage.`}, lines: 2}},
		"bind-fn/plan-usage": {reason: "a bad enum value of a command: the hint names the command's help",
			bin: "bind-fn", args: []string{"plan", "--format", "yaml"}, want: want{code: 64, stderr: []string{"--format", `Run "bind-fn plan --help" for usage.`}, lines: 2}},
		"bind-fn/render-bad-value": {reason: "render names the value, what it should be, and the field's file:line",
			bin: "bind-fn", args: []string{"render", bad}, want: want{code: 1, stderr: []string{badValue + " " + located}}},
		"bind-fn/plan-bad-value": {reason: "plan names it as render does",
			bin: "bind-fn", args: []string{"plan", "--old", base, bad}, want: want{code: 1, stderr: []string{"DNSRecord dns/blog " + located + " " + badValue}}},
		"bind-fn/render-syntax": {reason: "a YAML syntax error, at the line where the sequence opens",
			bin: "bind-fn", args: []string{"render", broken}, want: want{code: 1, stderr: []string{"bind-fn: error: records.yaml:35: invalid YAML: did not find expected ',' or ']'"}}},
		"bind-fn/plan-syntax": {reason: "plan reports the same syntax error at the same line",
			bin: "bind-fn", args: []string{"plan", "--old", base, broken}, want: want{code: 1, stderr: []string{"bind-fn: error: records.yaml:35: invalid YAML: did not find expected ',' or ']'"}}},

		"fn-render/help": {reason: "--help does not read stdin (a ResourceList) and exits 0",
			bin: "fn-render", args: []string{"--help"}, want: want{stdout: []string{"Usage: fn-render", "Exit codes:"}}},
		"fn-render/version": {reason: "--version", bin: "fn-render", args: []string{"--version"}, want: want{stdout: []string{"fn-render dev ("}}},
		"fn-render/usage": {reason: "a KRM function takes no arguments: exit 64, one line and a hint",
			bin: "fn-render", args: []string{"--bogus"}, want: want{code: 64, stderr: []string{`fn-render: error: unexpected argument "--bogus"`, `Run "fn-render --help" for usage.`}, lines: 2}},
		"fn-render/bad-value": {reason: "the result names the value and the field's file:line, read from the package kpt names",
			bin: "fn-render", stdin: rl, want: want{code: 1, stdout: []string{"198.51.100.300 is not an IPv4 address " + located}}},

		"fn-validate/help":    {reason: "--help", bin: "fn-validate", args: []string{"--help"}, want: want{stdout: []string{"Usage: fn-validate", "Exit codes:"}}},
		"fn-validate/version": {reason: "--version", bin: "fn-validate", args: []string{"--version"}, want: want{stdout: []string{"fn-validate dev ("}}},
		"fn-validate/usage": {reason: "exit 64, one line and a hint",
			bin: "fn-validate", args: []string{"extra"}, want: want{code: 64, stderr: []string{`fn-validate: error: unexpected argument "extra"`}, lines: 2}},
		"fn-validate/bad-value": {reason: "as fn-render",
			bin: "fn-validate", stdin: rl, want: want{code: 1, stdout: []string{"198.51.100.300 is not an IPv4 address " + located}}},

		"bind-fn-agent/help":    {reason: "--help: exit 0", bin: "bind-fn-agent", args: []string{"--help"}, want: want{stderr: []string{"Usage:", "Exit status:"}}},
		"bind-fn-agent/version": {reason: "--version", bin: "bind-fn-agent", args: []string{"--version"}, want: want{stdout: []string{"bind-fn-agent dev ("}}},
		"bind-fn-agent/usage": {reason: "an unknown command: exit 2, one line and a hint",
			bin: "bind-fn-agent", args: []string{"bogus"}, want: want{code: 2, stderr: []string{`bind-fn-agent: error: unknown command "bogus"`, `Run "bind-fn-agent --help" for usage.`}, lines: 2}},
		"bind-fn-agent/bad-value": {reason: "a flag value that is no duration: exit 2, naming the flag",
			bin: "bind-fn-agent", args: []string{"run", "-resolve-interval", "often"}, want: want{code: 2, stderr: []string{`"often"`, "resolve-interval"}}},

		"function-bind/help":    {reason: "--help", bin: "function-bind", args: []string{"--help"}, want: want{stdout: []string{"Usage: function-bind", "Exit codes:"}}},
		"function-bind/version": {reason: "--version", bin: "function-bind", args: []string{"--version"}, want: want{stdout: []string{"function-bind dev ("}}},
		"function-bind/usage": {reason: "exit 64 (not kong's 80), one line and a hint",
			bin: "function-bind", args: []string{"--bogus"}, want: want{code: 64, stderr: []string{"function-bind: error: unknown flag --bogus", `Run "function-bind --help" for usage.`}, lines: 2}},
		"function-bind/bad-value": {reason: "a flag value that is no number: exit 64, naming the flag and the value",
			bin: "function-bind", args: []string{"--max-recv-msg-size=big"}, want: want{code: 64, stderr: []string{"--max-recv-msg-size", `"big"`}, lines: 2}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bindtools.Bin(t, tc.bin), tc.args...)
			cmd.Stdin = bytes.NewReader(tc.stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			ok := code == tc.want.code
			for _, s := range tc.want.stdout {
				ok = ok && strings.Contains(stdout.String(), s)
			}
			for _, s := range tc.want.stderr {
				ok = ok && strings.Contains(stderr.String(), s)
			}
			if n := tc.want.lines; n > 0 {
				ok = ok && strings.Count(stderr.String(), "\n") == n
			}
			if !ok {
				t.Errorf("%s\n%s %s: exit %d (want %d)\nwant stdout with %q, stderr with %q (%d lines if not 0)\nstdout:\n%s\nstderr:\n%s",
					tc.reason, tc.bin, strings.Join(tc.args, " "), code, tc.want.code, tc.want.stdout, tc.want.stderr, tc.want.lines, trim(stdout.String()), stderr.String())
			}
		})
	}
}

// trim keeps a failure message short: a ResourceList's first lines.
func trim(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "\n..."
	}
	return s
}
