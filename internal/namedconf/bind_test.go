package namedconf

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// checkconf runs `named-checkconf -p` on conf and returns its output. The
// test fails when BIND is not installed, unless BINDFN_SKIP_BIND=1
// (bindtools.BINDPath).
func checkconf(t *testing.T, conf []byte) (string, error) {
	t.Helper()
	bin := bindtools.BINDPath(t, "named-checkconf")
	path := filepath.Join(t.TempDir(), "named.conf")
	if err := os.WriteFile(path, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(bin, "-p", path)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", &checkconfError{err: err, out: out.String() + stderr.String()}
	}
	return out.String(), nil
}

type checkconfError struct {
	err error
	out string
}

func (e *checkconfError) Error() string { return e.err.Error() + ": " + e.out }

// mustCheckconf is checkconf that fails the test when BIND rejects conf.
func mustCheckconf(t *testing.T, conf []byte) string {
	t.Helper()
	out, err := checkconf(t, conf)
	if err != nil {
		t.Fatalf("named-checkconf rejected:\n%s\n--- config ---\n%s", err, conf)
	}
	return out
}

var ignorePos = cmpopts.IgnoreFields(Stmt{}, "Pos")

// TestBINDGolden: the golden rendering is a configuration BIND accepts.
func TestBINDGolden(t *testing.T) {
	conf, err := sampleFile().Bytes()
	if err != nil {
		t.Fatal(err)
	}
	mustCheckconf(t, conf)
}

// TestBINDQuotedStringValue proves, with BIND itself, which value BIND reads
// from each string Str writes: `directory` must name an existing directory,
// so named-checkconf succeeds only when BIND's value is exactly the name of
// the directory we created.
func TestBINDQuotedStringValue(t *testing.T) {
	values := map[string]string{
		"Quote":           `a"b`,
		"Backslash":       `a\b`,
		"DoubleBackslash": `a\\b`,
		"EvenBeforeQuote": `a\\"b`,
		"EvenAtEnd":       `a\\`,
		"Breakout":        `a"; }; zone "evil`,
		"Comments":        `x # y ;* z`,
		"Braces":          `{ } ;`,
		"OddInMiddle":     `\\\x`,
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, v)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			conf, err := Format(B([]Word{Kw("options")}, S(Kw("directory"), Str(dir))))
			if err != nil {
				t.Fatal(err)
			}
			mustCheckconf(t, conf)
			// Negative control: the same text with a directory that does not
			// exist fails, so the check above is not vacuous.
			missing, _ := Format(B([]Word{Kw("options")}, S(Kw("directory"), Str(dir+"-missing"))))
			if _, err := checkconf(t, missing); err == nil {
				t.Fatalf("named-checkconf accepted a missing directory; the test proves nothing")
			}
		})
	}
}

// TestBINDHostileStrings: hostile values passed through Str either make
// Bytes fail, or give a configuration that BIND reads as exactly the same
// statements as a harmless value, with the hostile value intact.
func TestBINDHostileStrings(t *testing.T) {
	const harmless = "harmless.example"
	build := func(v string) *File {
		var f File
		f.Comment("value under test")
		f.Add(
			B([]Word{Kw("key"), Str(v)},
				S(Kw("algorithm"), Kw("hmac-sha256")),
				S(Kw("secret"), Str("aGVsbG8gd29ybGQ=")),
			),
			B([]Word{Kw("zone"), Str(v)},
				S(Kw("type"), Kw("primary")),
				S(Kw("file"), Str(v)),
				S(Kw("allow-transfer"), L(S(Kw("key"), Str(v)))),
				S(Kw("allow-update"), L(S(Kw("!"), Kw("key"), Str(v)), S(Kw("none")))),
			),
		)
		return &f
	}
	cases := map[string]struct {
		reason string
		value  string
		reject bool
	}{
		"Breakout":         {reason: "the classic: close the string and the zone, open another", value: `a"; }; zone "evil`},
		"BreakoutComment":  {reason: "close the string, then comment out the rest of the line", value: `a"; // `},
		"BreakoutHash":     {reason: "close the string, then a shell comment", value: `a" # `},
		"BreakoutCComment": {reason: "close the string, then open a C comment", value: `a" /* `},
		"Braces":           {reason: "braces in a value", value: `x{y}z`},
		"Semicolon":        {reason: "a semicolon in a value", value: `x;y`},
		"Comments":         {reason: "comment openers in a value", value: `x//y#z/*w*/`},
		"Backslashes":      {reason: "even backslash runs survive, also before a quote", value: `x\\"y\\`},
		"BackslashChar":    {reason: "a backslash before an ordinary character is kept", value: `x\y`},
		"TrailingBackslash": {
			reason: "a single trailing backslash would escape the closing quote",
			value:  `evil\`, reject: true,
		},
		"EscapedQuote": {
			reason: `a backslash-quote would end the string early`,
			value:  `a\"; }; zone "evil`, reject: true,
		},
		"Newline": {reason: "a quoted string may not span lines", value: "a\n}; zone \"evil", reject: true},
		"NUL":     {reason: "BIND cuts strings at NUL", value: "a\x00b", reject: true},
		"CR":      {reason: "control character", value: "a\rb", reject: true},
	}
	base, err := build(harmless).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	baseOut := mustCheckconf(t, base)
	want, err := ParseStatements(baseOut)
	if err != nil {
		t.Fatalf("parse named-checkconf -p output: %v", err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			conf, err := build(tc.value).Bytes()
			if tc.reject {
				if err == nil {
					t.Fatalf("%s\nBytes() accepted %q:\n%s", tc.reason, tc.value, conf)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nBytes(): %v", tc.reason, err)
			}
			out := mustCheckconf(t, conf)
			got, err := ParseStatements(out)
			if err != nil {
				t.Fatalf("parse named-checkconf -p output: %v\n%s", err, out)
			}
			replaceText(got, tc.value, harmless)
			if diff := cmp.Diff(want, got, ignorePos); diff != "" {
				t.Errorf("%s\nBIND read different statements for %q than for a harmless value: -want +got:\n%s\n--- rendered ---\n%s", tc.reason, tc.value, diff, conf)
			}
		})
	}
}

// replaceText swaps every quoted word equal to from for to.
func replaceText(stmts []Stmt, from, to string) {
	for i := range stmts {
		s := &stmts[i]
		for j := range s.Words {
			w := &s.Words[j]
			if w.Kind == Quoted && w.Text == from {
				w.Text = to
			}
			replaceText(w.Items, from, to)
		}
		replaceText(s.Body, from, to)
	}
}

// TestBINDParseStatementsEquivalent: for each testdata/parse/*.conf,
// BIND's own reading (named-checkconf -p) of the original and of our
// re-rendering is identical.
func TestBINDParseStatementsEquivalent(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "parse", "*.conf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/parse/*.conf: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			stmts, err := ParseStatements(string(src))
			if err != nil {
				t.Fatalf("ParseStatements: %v", err)
			}
			rendered, err := Format(stmts...)
			if err != nil {
				t.Fatalf("Format: %v", err)
			}
			want := mustCheckconf(t, src)
			got := mustCheckconf(t, rendered)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("BIND reads the re-rendering differently: -original +rendered:\n%s\n--- rendered ---\n%s", diff, rendered)
			}
		})
	}
}

// TestBINDElements: every element ParseElement and ParseServerEntry
// accept renders to something BIND accepts, and BIND reads it as expected.
func TestBINDElements(t *testing.T) {
	aml := []string{
		"any", "NONE", "localhost", "localnets", "10.0.0.0/8", "192.0.2.1", "192.0.2.1/32",
		"2001:db8::/32", "2001:DB8::1", "!10.1.0.0/16", "! key xfr", `key "xfr"`, "internal", `!"internal"`,
		"::ffff:192.0.2.1",
	}
	servers := []string{
		"192.0.2.1", "2001:db8::1 port 5353", "192.0.2.2 key xfr", `192.0.2.3 port 53 key "xfr"`, "secs",
	}
	var elems []Stmt
	for _, s := range aml {
		e, err := ParseElement(s)
		if err != nil {
			t.Fatalf("ParseElement(%q): %v", s, err)
		}
		elems = append(elems, e.Stmt())
	}
	var entries []Stmt
	for _, s := range servers {
		e, err := ParseServerEntry(s)
		if err != nil {
			t.Fatalf("ParseServerEntry(%q): %v", s, err)
		}
		entries = append(entries, e.Stmt())
	}
	var f File
	f.Add(
		B([]Word{Kw("key"), Str("xfr")}, S(Kw("algorithm"), Kw("hmac-sha256")), S(Kw("secret"), Str("aGVsbG8gd29ybGQ="))),
		B([]Word{Kw("acl"), Str("internal")}, S(Kw("10.0.0.0/8"))),
		B([]Word{Kw("primaries"), Str("secs")}, S(Kw("192.0.2.9"), Kw("key"), Str("xfr"))),
		B([]Word{Kw("options")}, B([]Word{Kw("allow-query")}, elems...)),
		B([]Word{Kw("zone"), Str("example.com")},
			S(Kw("type"), Kw("secondary")),
			S(Kw("file"), Str("example.com.db")),
			B([]Word{Kw("primaries")}, entries...),
		),
		B([]Word{Kw("zone"), Str("example.net")},
			S(Kw("type"), Kw("primary")),
			S(Kw("file"), Str("example.net.db")),
			S(Kw("also-notify"), L(entries...)),
		),
	)
	conf, err := f.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	out := mustCheckconf(t, conf)
	for _, want := range []string{
		"\t\t!10.1.0.0/16;\n", "\t\t!key \"xfr\";\n", "\t\t!\"internal\";\n", "\t\t2001:db8::1/128;\n",
		"\t\t2001:db8::1 port 5353;\n", "\t\t192.0.2.3 port 53 key \"xfr\";\n", "\t\t\"secs\";\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("named-checkconf -p output lacks %q:\n%s", want, out)
		}
	}
}

// TestBINDLexerFacts pins the BIND behaviour the rules in doc.go rest on, by
// feeding named-checkconf text Str and Kw would never write. If a BIND
// upgrade changes one of these, this test says which rule to revisit.
func TestBINDLexerFacts(t *testing.T) {
	const keyBody = ` { algorithm hmac-sha256; secret "aGVsbG8gd29ybGQ="; };` + "\n"
	cases := map[string]struct {
		reason string
		conf   string
		// wantOut is a substring of the -p output; "" means BIND must reject.
		wantOut string
	}{
		"NULCutsString": {
			reason:  "BIND silently cuts a quoted string at NUL, so Str refuses NUL",
			conf:    "key \"ab\x00cd\"" + keyBody,
			wantOut: "key \"ab\" {",
		},
		"MultiLineString": {
			reason:  "a quoted string may span lines, so Str refuses line breaks",
			conf:    "key \"m\nn\"" + keyBody,
			wantOut: "key \"m\nn\" {",
		},
		"EscapedQuote": {
			reason:  `\" is a quote inside the string`,
			conf:    `key "a\"b"` + keyBody,
			wantOut: `key "a\"b" {`,
		},
		"HashInWord": {
			reason:  "# opens a comment even inside a bare word, so Kw refuses #",
			conf:    "acl foo#bar\n{ 10.0.0.0/8; };\n",
			wantOut: "acl \"foo\" {",
		},
		"BangIsToken": {
			reason: "! is a token of its own: a!b is three tokens",
			conf:   "acl x { a!b; };\n",
		},
		"NoEscapeInWord": {
			reason: `a backslash does not escape a space in a bare word`,
			conf:   `key a\ b` + keyBody,
		},
		"SlashSplits": {
			reason:  "a / splits a bare word the way BIND's netprefix parser expects",
			conf:    "acl x { 10.0.0.0 / 8; };\n",
			wantOut: "10.0.0.0/8;",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := checkconf(t, []byte(tc.conf))
			if tc.wantOut == "" {
				if err == nil {
					t.Fatalf("%s\nnamed-checkconf accepted %q:\n%s", tc.reason, tc.conf, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nnamed-checkconf rejected %q: %v", tc.reason, tc.conf, err)
			}
			if !strings.Contains(out, tc.wantOut) {
				t.Errorf("%s\nnamed-checkconf -p output lacks %q:\n%s", tc.reason, tc.wantOut, out)
			}
		})
	}
}
