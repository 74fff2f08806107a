package namedconf

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

// sampleFile is the golden rendering: every shape the writer produces.
func sampleFile() *File {
	var f File
	f.Comment("Rendered by bind-fn. Do not edit.\nSecond line.")
	f.Add(
		B([]Word{Kw("key"), Str("xfr")},
			S(Kw("algorithm"), Kw("hmac-sha256")),
			S(Kw("secret"), Str("aGVsbG8gd29ybGQ=")),
		),
		B([]Word{Kw("key"), Str("rndc-key")},
			S(Kw("algorithm"), Kw("hmac-sha256")),
			S(Kw("secret"), Str("cm5kYyBrZXkgbWF0ZXJpYWw=")),
		),
		B([]Word{Kw("primaries"), Str("secondaries")},
			S(Kw("192.0.2.10"), Kw("key"), Str("xfr")),
			S(Kw("2001:db8::10"), Kw("port"), Int(5353), Kw("key"), Str("xfr")),
		),
		B([]Word{Kw("acl"), Str("internal")},
			S(Kw("10.0.0.0/8")),
			S(Kw("!"), Kw("10.1.0.0/16")),
			S(Kw("!"), Kw("key"), Str("xfr")),
			B(nil, S(Kw("192.0.2.0/24")), S(Kw("2001:db8::/32"))),
		),
		B([]Word{Kw("options")},
			S(Kw("directory"), Str("/")),
			S(Kw("listen-on"), Kw("port"), Int(53), L(S(Kw("any")))),
			S(Kw("allow-transfer"), L(S(Kw("key"), Str("xfr")))),
			S(Kw("also-notify"), L(S(Str("secondaries")), S(Kw("192.0.2.1"), Kw("key"), Str("xfr")))),
			S(Kw("allow-recursion"), L()),
			S(Kw("notify"), Kw("explicit")),
		),
		B([]Word{Kw("controls")},
			S(Kw("inet"), Kw("127.0.0.1"), Kw("port"), Int(953), Kw("allow"), L(S(Kw("localhost"))), Kw("keys"), L(S(Str("rndc-key")))),
		),
	)
	f.Comment("zones")
	f.Add(
		B([]Word{Kw("zone"), Str("example.com")},
			S(Kw("type"), Kw("primary")),
			S(Kw("file"), Str("/var/lib/bind/example.com.db")),
		),
		B([]Word{Kw("logging")}),
	)
	return &f
}

func TestBytesGolden(t *testing.T) {
	got, err := sampleFile().Bytes()
	if err != nil {
		t.Fatalf("Bytes(): %v", err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "sample.conf"), got)
	again, _ := sampleFile().Bytes()
	if string(again) != string(got) {
		t.Errorf("Bytes() is not deterministic")
	}
}

func TestBytesLayout(t *testing.T) {
	var f File
	f.Add(S(Kw("include"), Str("a")), S(Kw("include"), Str("b")))
	f.Comment("block")
	f.Add(B([]Word{Kw("x")}, S(Kw("y"))), B([]Word{Kw("z")}), S(Kw("include"), Str("c")))
	f.Comment("")
	f.Comment("tail")
	got, err := f.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := `include "a";
include "b";

// block
x {
	y;
};

z { };

include "c";

//
// tail
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("blank lines separate top-level blocks, comments stay with what follows: -want +got:\n%s", diff)
	}
}

func TestQuote(t *testing.T) {
	cases := map[string]struct {
		reason string
		value  string
		want   string
		errSub string
	}{
		"Plain":             {reason: "ordinary text is written as is", value: "example.com", want: `"example.com"`},
		"Empty":             {reason: "the empty string is a valid value", value: "", want: `""`},
		"Quote":             {reason: `a double quote is escaped as \"`, value: `a"b`, want: `"a\"b"`},
		"Breakout":          {reason: "a statement breakout stays inside the string", value: `a"; }; zone "evil`, want: `"a\"; }; zone \"evil"`},
		"Backslash":         {reason: "BIND keeps a backslash before an ordinary character", value: `a\b`, want: `"a\b"`},
		"DoubleBackslash":   {reason: `BIND does not collapse \\: both stay`, value: `a\\b`, want: `"a\\b"`},
		"EvenBeforeQuote":   {reason: `\\ then a quote: the pair stays, the quote is escaped`, value: `a\\"b`, want: `"a\\\"b"`},
		"EvenAtEnd":         {reason: "an even run at the end leaves the closing quote alone", value: `a\\`, want: `"a\\"`},
		"Braces":            {reason: "braces and semicolons are plain characters in a string", value: "{ } ;", want: `"{ } ;"`},
		"Comments":          {reason: "comment openers are plain characters in a string", value: "// # /* */", want: `"// # /* */"`},
		"UTF8":              {reason: "UTF-8 passes through", value: "zürich", want: `"zürich"`},
		"OddAtEnd":          {reason: "a single trailing backslash would escape the closing quote", value: `a\`, errSub: "single backslash"},
		"OddBeforeQuote":    {reason: `\" in a value cannot be expressed: BIND replaces the backslash`, value: `a\"b`, errSub: "single backslash"},
		"NUL":               {reason: "BIND cuts strings at NUL", value: "a\x00b", errSub: "NUL"},
		"Newline":           {reason: "BIND reads quoted strings across lines", value: "a\nb", errSub: "line break"},
		"CarriageReturn":    {reason: "control character", value: "a\rb", errSub: "U+000D"},
		"Tab":               {reason: "control character", value: "a\tb", errSub: "tab"},
		"Delete":            {reason: "control character", value: "a\x7fb", errSub: "U+007F"},
		"InvalidUTF8":       {reason: "bytes that are not UTF-8 are refused", value: "a\xffb", errSub: "UTF-8"},
		"ThreeBeforeQuote":  {reason: "odd run of three before a quote", value: `\\\"`, errSub: "single backslash"},
		"OddInMiddleIsFine": {reason: "an odd run before an ordinary character is kept", value: `\\\x`, want: `"\\\x"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := quote(tc.value)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("%s\nquote(%q): got (%q, %v), want error containing %q", tc.reason, tc.value, got, err, tc.errSub)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nquote(%q): %v", tc.reason, tc.value, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nquote(%q): -want +got:\n%s", tc.reason, tc.value, diff)
			}
			// What we write, our BIND-compatible lexer reads back.
			back, err := ParseStatements("x " + got + ";")
			if err != nil {
				t.Fatalf("re-parse: %v", err)
			}
			if diff := cmp.Diff(tc.value, back[0].Words[1].Text); diff != "" {
				t.Errorf("%s\nre-parsed value: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestBytesErrors(t *testing.T) {
	zone := func(body ...Stmt) Stmt { return B([]Word{Kw("zone"), Str("example.com")}, body...) }
	cases := map[string]struct {
		reason string
		build  func(f *File)
		errSub []string
	}{
		"KeywordSpace": {
			reason: "a keyword with a space would split into two tokens",
			build:  func(f *File) { f.Add(S(Kw("allow transfer"))) },
			errSub: []string{`keyword "allow transfer"`, "use Str"},
		},
		"KeywordSemicolon": {
			reason: "a keyword with ';' would end the statement",
			build:  func(f *File) { f.Add(zone(S(Kw("type"), Kw("primary;")))) },
			errSub: []string{`zone "example.com" > type: word 2`, `';'`},
		},
		"KeywordComment": {
			reason: "a keyword with // would comment out the rest of the line",
			build:  func(f *File) { f.Add(S(Kw("a//b"))) },
			errSub: []string{"comment opener"},
		},
		"KeywordCComment": {
			reason: "a keyword with /* would open a comment",
			build:  func(f *File) { f.Add(S(Kw("a/*"))) },
			errSub: []string{"comment opener"},
		},
		"KeywordHash": {
			reason: "# opens a comment even inside a word in BIND",
			build:  func(f *File) { f.Add(S(Kw("a#b"))) },
			errSub: []string{"'#'"},
		},
		"KeywordEmpty": {
			reason: "an empty keyword renders nothing",
			build:  func(f *File) { f.Add(S(Kw(""))) },
			errSub: []string{"empty keyword"},
		},
		"EmptyStatement": {
			reason: "a statement without words is a bare ';', which BIND rejects",
			build:  func(f *File) { f.Add(zone(S())) },
			errSub: []string{`zone "example.com" > (no words): empty statement`},
		},
		"StringNewlineInList": {
			reason: "the path names the statement and the list",
			build: func(f *File) {
				f.Add(zone(S(Kw("also-notify"), L(S(Str("a\nb"))))))
			},
			errSub: []string{`zone "example.com" > also-notify > list (word 2) > "a\nb": word 1`, "line break"},
		},
		"HostileZoneName": {
			reason: "the path quotes hostile names Go-style",
			build:  func(f *File) { f.Add(B([]Word{Kw("zone"), Str("a\x00\"; };")})) },
			errSub: []string{`zone "a\x00\"; };": word 2`, "NUL"},
		},
		"BodyWithoutBlock": {
			reason: "a body on a simple statement would be dropped silently",
			build:  func(f *File) { f.Add(Stmt{Words: []Word{Kw("a")}, Body: []Stmt{S(Kw("b"))}}) },
			errSub: []string{"a: statement has a body but is not a block"},
		},
		"CommentControl": {
			reason: "a comment may not carry control characters",
			build:  func(f *File) { f.Comment("a\rb") },
			errSub: []string{"comment 1", "U+000D"},
		},
		"ZeroWord": {
			reason: "a Word{} was not built with a constructor",
			build:  func(f *File) { f.Add(S(Kw("a"), Word{})) },
			errSub: []string{"word has no kind"},
		},
		"BadServerEntry": {
			reason: "a ServerEntry with nothing set fails at render time",
			build:  func(f *File) { f.Add(S(Kw("also-notify"), L(ServerEntry{}.Stmt()))) },
			errSub: []string{"neither an address nor a list name"},
		},
		"BadAMLElement": {
			reason: "an AMLElement with nothing set fails at render time",
			build:  func(f *File) { f.Add(S(Kw("allow-query"), L(AMLElement{Negated: true}.Stmt()))) },
			errSub: []string{"empty address match list element"},
		},
		"SeveralErrors": {
			reason: "every problem is reported, not just the first",
			build:  func(f *File) { f.Add(S(Kw("a b")), S(Str("\x01"))) },
			errSub: []string{`keyword "a b"`, "U+0001"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var f File
			tc.build(&f)
			got, err := f.Bytes()
			if err == nil {
				t.Fatalf("%s\nBytes() = %q, want error", tc.reason, got)
			}
			for _, sub := range tc.errSub {
				if !strings.Contains(err.Error(), sub) {
					t.Errorf("%s\nBytes() error %q does not contain %q", tc.reason, err, sub)
				}
			}
		})
	}
}

func TestName(t *testing.T) {
	cases := map[string]struct {
		reason string
		stmt   Stmt
		want   string
	}{
		"Lower":  {reason: "names are lowercased", stmt: S(Kw("Allow-Transfer")), want: "allow-transfer"},
		"Quoted": {reason: "a quoted first word counts", stmt: S(Str("Internal")), want: "internal"},
		"Empty":  {reason: "no words, no name", stmt: B(nil), want: ""},
		"List":   {reason: "a list is not a name", stmt: S(L()), want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.stmt.Name(); got != tc.want {
				t.Errorf("%s\nName() = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}
