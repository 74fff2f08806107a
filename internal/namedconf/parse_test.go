package namedconf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatements(t *testing.T) {
	cases := map[string]struct {
		reason string
		src    string
		want   []Stmt
	}{
		"Empty": {
			reason: "no text, no statements",
			src:    " \n\t// only a comment\n",
		},
		"Simple": {
			reason: "bare and quoted words end at ';'",
			src:    `include "/etc/bind/x.conf";`,
			want:   []Stmt{S(Kw("include"), Str("/etc/bind/x.conf"))},
		},
		"Block": {
			reason: "a trailing brace group followed by ';' is a block",
			src:    "zone \"example.com\" {\n type primary;\n};",
			want:   []Stmt{B([]Word{Kw("zone"), Str("example.com")}, S(Kw("type"), Kw("primary")))},
		},
		"EmptyBlock": {
			reason: "an empty block has no body",
			src:    "logging {};",
			want:   []Stmt{B([]Word{Kw("logging")})},
		},
		"MidList": {
			reason: "a brace group followed by more words is an inline list word",
			src:    `inet 127.0.0.1 allow { localhost; } keys { "rndc"; };`,
			want: []Stmt{{
				Words: []Word{Kw("inet"), Kw("127.0.0.1"), Kw("allow"), L(S(Kw("localhost"))), Kw("keys")},
				Block: true, Body: []Stmt{S(Str("rndc"))},
			}},
		},
		"NestedList": {
			reason: "a headless nested list in an address match list",
			src:    "allow-query { { 10.0.0.0/8; }; any; };",
			want:   []Stmt{B([]Word{Kw("allow-query")}, B(nil, S(Kw("10.0.0.0/8"))), S(Kw("any")))},
		},
		"Negation": {
			reason: "BIND makes '!' a token of its own, with or without a space",
			src:    `a { !10.0.0.0/8; ! key "k"; !"acl"; };`,
			want: []Stmt{B([]Word{Kw("a")},
				S(Kw("!"), Kw("10.0.0.0/8")), S(Kw("!"), Kw("key"), Str("k")), S(Kw("!"), Str("acl")))},
		},
		"NoSpaces": {
			reason: "braces, ';' and quotes delimit words without spaces",
			src:    `allow-transfer{key"xfr";};`,
			want:   []Stmt{B([]Word{Kw("allow-transfer")}, S(Kw("key"), Str("xfr")))},
		},
		"Comments": {
			reason: "# // and /* */ comments end words and are dropped",
			src:    "a#x\nb//y\nc/*z*/d /* multi\nline */ e;",
			want:   []Stmt{S(Kw("a"), Kw("b"), Kw("c"), Kw("d"), Kw("e"))},
		},
		"CommentMarkersInStrings": {
			reason: "comment openers and specials inside quotes are text",
			src:    `file "a#b//c/*d*/{};";`,
			want:   []Stmt{S(Kw("file"), Str("a#b//c/*d*/{};"))},
		},
		"SlashInWord": {
			reason: "a single '/' stays in the word: prefixes",
			src:    "x 2001:db8::/32 10.0.0.0/8;",
			want:   []Stmt{S(Kw("x"), Kw("2001:db8::/32"), Kw("10.0.0.0/8"))},
		},
		"EscapedQuote": {
			reason: `\" is a quote; the backslash is dropped`,
			src:    `zone "a\"; }; zone \"evil";`,
			want:   []Stmt{S(Kw("zone"), Str(`a"; }; zone "evil`))},
		},
		"BackslashesKept": {
			reason: `BIND keeps \\ and \x as written`,
			src:    `d "a\\b\x" "\\\"";`,
			want:   []Stmt{S(Kw("d"), Str(`a\\b\x`), Str(`\\"`))},
		},
		"UTF8String": {
			reason: "UTF-8 in quotes is fine",
			src:    `x "zürich";`,
			want:   []Stmt{S(Kw("x"), Str("zürich"))},
		},
		"Percent": {
			reason: "max-cache-size 10%",
			src:    "max-cache-size 10%;",
			want:   []Stmt{S(Kw("max-cache-size"), Kw("10%"))},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseStatements(tc.src)
			if err != nil {
				t.Fatalf("%s\nParseStatements(%q): %v", tc.reason, tc.src, err)
			}
			if diff := cmp.Diff(tc.want, got, ignorePos); diff != "" {
				t.Errorf("%s\nParseStatements(%q): -want +got:\n%s", tc.reason, tc.src, diff)
			}
			assertRoundTrip(t, tc.src)
		})
	}
}

func TestParseStatementsErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		src    string
		want   string
	}{
		"UnterminatedString": {reason: "a string must close", src: "a \"b;\n", want: `line 1:3: unterminated quoted string`},
		"UnterminatedEscaped": {
			reason: `\" does not close a string`, src: `a "b\";`, want: "line 1:3: unterminated quoted string",
		},
		"UnterminatedComment": {reason: "a C comment must close", src: "a;\n  /* x", want: "line 2:3: unterminated /* comment"},
		"MissingSemicolon":    {reason: "a statement ends with ';'", src: "a b", want: "line 1:4: missing ';' at end of text (statement started at 1:1)"},
		"MissingSemicolonBlock": {
			reason: "a block ends with '};'", src: "a { b; }", want: "missing ';' at end of text",
		},
		"MissingSemicolonBeforeClose": {
			reason: "the last statement in a block needs ';'", src: "a {\n  b\n};", want: "line 3:1: missing ';' before '}' (statement started at 2:3)",
		},
		"MissingClose":   {reason: "braces balance", src: "a {\n b;\n", want: "line 3:1: missing '}' for the '{' at 1:3"},
		"ExtraClose":     {reason: "braces balance", src: "a; };", want: "line 1:4: unexpected '}' with no open block"},
		"EmptyStatement": {reason: "a lone ';' is not a statement", src: "a { ; };", want: "line 1:5: empty statement"},
		"NewlineInString": {
			reason: "quoted strings may not hold line breaks (BIND would accept them)", src: "a \"x\ny\";", want: "line 1:3: quoted string",
		},
		"NULInString":     {reason: "BIND cuts strings at NUL", src: "a \"x\x00y\";", want: "NUL"},
		"InvalidUTF8":     {reason: "strings are UTF-8", src: "a \"x\xffy\";", want: "UTF-8"},
		"BackslashInWord": {reason: "BIND does not escape in bare words", src: `a\ b;`, want: `line 1:2: character '\\' is not allowed outside quotes`},
		"Equals":          {reason: "only keyword characters outside quotes", src: "x = y;", want: "line 1:3: character '='"},
		"Unicode":         {reason: "non-ASCII needs quotes", src: "a\n  zürich;", want: "line 2:4: character 'ü'"},
		"Control":         {reason: "control characters are refused", src: "a\x0cb;", want: "line 1:2: character '\\f'"},
		"TooDeep": {
			reason: "nesting is bounded", src: strings.Repeat("a {", 70) + strings.Repeat("};", 70), want: "nested deeper than 64",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseStatements(tc.src)
			if err == nil {
				t.Fatalf("%s\nParseStatements(%q) = %v, want error", tc.reason, tc.src, got)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nParseStatements(%q) error %q does not contain %q", tc.reason, tc.src, err, tc.want)
			}
		})
	}
}

func TestParseStatementsPos(t *testing.T) {
	src := "a;\n\tzone \"ü\" {\n\t\ttype primary;\n\t};\n"
	got, err := ParseStatements(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pos{{1, 1}, {2, 2}, {3, 3}}
	gotPos := []Pos{got[0].Pos, got[1].Pos, got[1].Body[0].Pos}
	if diff := cmp.Diff(want, gotPos); diff != "" {
		t.Errorf("statement positions: -want +got:\n%s", diff)
	}
}

// assertRoundTrip checks parse → render → parse gives the same statements.
func assertRoundTrip(t *testing.T, src string) {
	t.Helper()
	first, err := ParseStatements(src)
	if err != nil {
		return
	}
	out, err := Format(first...)
	if err != nil {
		t.Fatalf("Format(ParseStatements(%q)): %v", src, err)
	}
	second, err := ParseStatements(string(out))
	if err != nil {
		t.Fatalf("ParseStatements(Format(...)) of %q: %v\n%s", src, err, out)
	}
	if diff := cmp.Diff(first, second, ignorePos); diff != "" {
		t.Fatalf("parse → render → parse changed %q: -first +second:\n%s\n--- rendered ---\n%s", src, diff, out)
	}
	again, err := Format(second...)
	if err != nil || string(again) != string(out) {
		t.Fatalf("render is not idempotent for %q:\n%s\n---\n%s", src, out, again)
	}
}

func FuzzParseStatements(f *testing.F) {
	for _, s := range []string{
		`options { directory "/"; allow-query { !10.0.0.0/8; key "k"; any; }; };`,
		`zone "a\"; }; zone \"evil" { type primary; file "x"; };`,
		"a#x\nb//y\nc/*z*/d;",
		`inet 127.0.0.1 allow { localhost; } keys { "rndc"; };`,
		`x "\\\"" "a\b" { { 1; }; };`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		assertRoundTrip(t, src)
	})
}

// FuzzQuote: whatever Str accepts, a BIND-compatible lexer reads back as
// exactly the same value, in one token.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{`a"; }; zone "evil`, `\\"`, `a\`, "a\x00b", `\"`, "//#/*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		out, err := Format(S(Kw("x"), Str(v), Kw("y")))
		if err != nil {
			return
		}
		got, err := ParseStatements(string(out))
		if err != nil {
			t.Fatalf("ParseStatements(%q): %v", out, err)
		}
		want := []Stmt{S(Kw("x"), Str(v), Kw("y"))}
		if diff := cmp.Diff(want, got, ignorePos); diff != "" {
			t.Fatalf("Str(%q) read back differently: -want +got:\n%s", v, diff)
		}
	})
}
