package namedconf

import (
	"strconv"
	"strings"
)

// WordKind says how a Word is written.
type WordKind uint8

// Word kinds.
const (
	// Invalid is the zero kind: a word not built with Kw, Str, Int or L, or
	// one a helper marked as a programmer error (Text says why). Rendering it
	// fails.
	Invalid WordKind = iota
	// Bare is an unquoted token: a keyword, number, address or prefix.
	Bare
	// Quoted is a double-quoted string.
	Quoted
	// List is an inline brace list used as a value: { a; b; }.
	List
)

func (k WordKind) String() string {
	switch k {
	case Bare:
		return "bare"
	case Quoted:
		return "quoted"
	case List:
		return "list"
	}
	return "invalid"
}

// Word is one token of a statement. Build it with Kw, Str, Int or L; nothing
// is checked until File.Bytes, which refuses anything BIND could read
// differently from what was meant.
type Word struct {
	Kind WordKind
	// Text is the keyword (Bare) or the string value (Quoted) exactly as
	// BIND's lexer hands it to the parser.
	Text string
	// Items are the statements of a List.
	Items []Stmt
}

// Kw is a bare keyword or identifier chosen by the program ("zone",
// "primary", "hmac-sha256", "10.0.0.0/8"). It may hold only the characters
// [A-Za-z0-9_.:/*!%-] and must not contain "//" or "/*" (comment openers);
// anything else makes File.Bytes fail. Never pass user input to Kw: use Str.
func Kw(s string) Word { return Word{Kind: Bare, Text: s} }

// Str is a double-quoted string whose value, as BIND reads it, is exactly s.
// See the package documentation for the escaping rules. Values BIND cannot
// represent (control characters, invalid UTF-8, a backslash before a double
// quote or at the end) make File.Bytes fail with the statement path.
func Str(s string) Word { return Word{Kind: Quoted, Text: s} }

// Int is a decimal number.
func Int(n int64) Word { return Word{Kind: Bare, Text: strconv.FormatInt(n, 10)} }

// L is an inline list used as a value, rendered on one line:
// also-notify { "a"; 192.0.2.1 key "k"; };
func L(items ...Stmt) Word { return Word{Kind: List, Items: items} }

// invalidWord makes rendering fail with msg.
func invalidWord(msg string) Word { return Word{Kind: Invalid, Text: msg} }

// Pos is a position in parsed text, 1-based. The zero Pos means "built by
// the program".
type Pos struct {
	Line, Col int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return "-"
	}
	return strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
}

// Stmt is a statement: `words...;` or, when Block is set, a block
// `words... { body... };`.
type Stmt struct {
	Words []Word
	Block bool
	Body  []Stmt
	// Pos is where ParseStatements found the statement.
	Pos Pos
}

// S is a simple statement: `words...;`.
func S(words ...Word) Stmt { return Stmt{Words: words} }

// B is a block statement: `head { body... };`. An empty body renders
// `head { };`.
func B(head []Word, body ...Stmt) Stmt { return Stmt{Words: head, Block: true, Body: body} }

// Name is the first word as text, lowercased ("allow-transfer"); "" when the
// statement has no words or starts with a list.
func (s Stmt) Name() string {
	if len(s.Words) == 0 || s.Words[0].Kind == List {
		return ""
	}
	return strings.ToLower(s.Words[0].Text)
}

// Arg is the text of word i (Bare or Quoted), or "" when there is none.
func (s Stmt) Arg(i int) string {
	if i < 0 || i >= len(s.Words) || s.Words[i].Kind == List {
		return ""
	}
	return s.Words[i].Text
}
