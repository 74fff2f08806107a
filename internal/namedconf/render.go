package namedconf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// File is a named.conf (or an include) being built. The zero File is empty
// and ready to use.
type File struct {
	items []item
}

type item struct {
	comment   string
	isComment bool
	stmt      Stmt
}

// Comment adds `// text` at the current position; each line of text becomes
// one comment line. Control characters other than the line breaks make Bytes
// fail.
func (f *File) Comment(text string) {
	f.items = append(f.items, item{comment: text, isComment: true})
}

// Add appends statements in the given order.
func (f *File) Add(stmts ...Stmt) {
	for _, s := range stmts {
		f.items = append(f.items, item{stmt: s})
	}
}

// Bytes renders the file: tab indentation, one statement per line, a blank
// line around top-level blocks, inline lists on one line. The output is a
// function of the statements alone. It fails, naming the statement path, when
// any word could be read by BIND differently from what it holds.
func (f *File) Bytes() ([]byte, error) {
	r := &renderer{}
	const (
		none = iota
		comment
		simple
		block
	)
	prev := none
	for i, it := range f.items {
		cur := simple
		switch {
		case it.isComment:
			cur = comment
		case it.stmt.Block:
			cur = block
		}
		if prev == block || (prev == simple && cur != simple) {
			r.b.WriteByte('\n')
		}
		prev = cur
		if it.isComment {
			r.comment(it.comment, i)
			continue
		}
		r.stmt(it.stmt, 0, nil)
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	return []byte(r.b.String()), nil
}

// Format renders statements as a File would.
func Format(stmts ...Stmt) ([]byte, error) {
	var f File
	f.Add(stmts...)
	return f.Bytes()
}

// maxErrors caps the problems one Bytes call reports.
const maxErrors = 10

type renderer struct {
	b    strings.Builder
	errs []error
}

func (r *renderer) fail(path []string, format string, args ...any) {
	if len(r.errs) >= maxErrors {
		return
	}
	where := "top level"
	if len(path) > 0 {
		where = strings.Join(path, " > ")
	}
	r.errs = append(r.errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
}

func (r *renderer) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return fmt.Errorf("cannot render named.conf: %w", errors.Join(r.errs...))
}

func (r *renderer) comment(text string, index int) {
	for _, line := range strings.Split(text, "\n") {
		if err := checkText(line); err != nil {
			r.fail([]string{"comment " + strconv.Itoa(index+1)}, "%v", err)
			return
		}
		if line == "" {
			r.b.WriteString("//\n")
			continue
		}
		r.b.WriteString("// ")
		r.b.WriteString(line)
		r.b.WriteByte('\n')
	}
}

// stmt writes s on its own line(s) at depth.
func (r *renderer) stmt(s Stmt, depth int, path []string) {
	path = append(path[:len(path):len(path)], label(s))
	r.checkShape(s, path)
	indent(&r.b, depth)
	r.words(s.Words, path)
	if !s.Block {
		r.b.WriteString(";\n")
		return
	}
	if len(s.Words) > 0 {
		r.b.WriteByte(' ')
	}
	if len(s.Body) == 0 {
		r.b.WriteString("{ };\n")
		return
	}
	r.b.WriteString("{\n")
	for _, c := range s.Body {
		r.stmt(c, depth+1, path)
	}
	indent(&r.b, depth)
	r.b.WriteString("};\n")
}

func (r *renderer) checkShape(s Stmt, path []string) {
	if len(s.Words) == 0 && !s.Block {
		r.fail(path, "empty statement")
	}
	if len(s.Body) > 0 && !s.Block {
		r.fail(path, "statement has a body but is not a block; build it with B")
	}
}

// inline writes s on the current line, ending with ';'.
func (r *renderer) inline(s Stmt, path []string) {
	path = append(path[:len(path):len(path)], label(s))
	r.checkShape(s, path)
	r.words(s.Words, path)
	if s.Block {
		if len(s.Words) > 0 {
			r.b.WriteByte(' ')
		}
		r.list(s.Body, path)
	}
	r.b.WriteByte(';')
}

func (r *renderer) list(items []Stmt, path []string) {
	r.b.WriteByte('{')
	for _, it := range items {
		r.b.WriteByte(' ')
		r.inline(it, path)
	}
	r.b.WriteString(" }")
}

func (r *renderer) words(ws []Word, path []string) {
	for i, w := range ws {
		// A bare "!" (negation) is glued to what it negates: !10.0.0.0/8.
		if i > 0 && !(ws[i-1].Kind == Bare && ws[i-1].Text == "!") {
			r.b.WriteByte(' ')
		}
		r.word(w, path, i)
	}
}

func (r *renderer) word(w Word, path []string, i int) {
	switch w.Kind {
	case Bare:
		if err := checkKeyword(w.Text); err != nil {
			r.fail(path, "word %d: %v", i+1, err)
			return
		}
		r.b.WriteString(w.Text)
	case Quoted:
		q, err := quote(w.Text)
		if err != nil {
			r.fail(path, "word %d: %v", i+1, err)
			return
		}
		r.b.WriteString(q)
	case List:
		r.list(w.Items, append(path[:len(path):len(path)], "list (word "+strconv.Itoa(i+1)+")"))
	case Invalid:
		msg := w.Text
		if msg == "" {
			msg = "word has no kind; build words with Kw, Str, Int or L"
		}
		r.fail(path, "word %d: %s", i+1, msg)
	default:
		r.fail(path, "word %d: unknown word kind %d", i+1, w.Kind)
	}
}

func indent(b *strings.Builder, depth int) {
	for range depth {
		b.WriteByte('\t')
	}
}

// label names a statement in error paths: its first word and, when it is a
// name, the second (zone "example.com"). It is quoted Go-style, so hostile
// values cannot disturb the message.
func label(s Stmt) string {
	if len(s.Words) == 0 {
		if s.Block {
			return "{ list }"
		}
		return "(no words)"
	}
	first, name := s.Words[0], ""
	switch {
	case first.Kind == Bare && checkKeyword(first.Text) == nil:
		name = first.Text
	case first.Kind == Bare || first.Kind == Quoted:
		name = quoteForMessage(first.Text)
	default:
		return "{ list }"
	}
	if len(s.Words) > 1 && s.Words[1].Kind == Quoted {
		name += " " + quoteForMessage(s.Words[1].Text)
	}
	return name
}

func quoteForMessage(t string) string {
	if len(t) > 64 {
		t = t[:64] + "..."
	}
	return strconv.Quote(t)
}

// isKeywordByte reports whether c may appear in a bare word.
func isKeywordByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("_.:/*!%-", c) >= 0
}

// keywordChars describes isKeywordByte for messages.
const keywordChars = "letters, digits and _ . : / * ! % -"

func checkKeyword(s string) error {
	if s == "" {
		return errors.New("empty keyword")
	}
	for i := 0; i < len(s); i++ {
		if !isKeywordByte(s[i]) {
			return fmt.Errorf("keyword %q: character %q is not allowed in a bare word (only %s); use Str for values", s, rune(s[i]), keywordChars)
		}
	}
	if strings.Contains(s, "//") || strings.Contains(s, "/*") {
		return fmt.Errorf("keyword %q: contains a comment opener (// or /*)", s)
	}
	return nil
}

// checkText rejects what named.conf cannot carry in a string or comment:
// invalid UTF-8 and control characters (BIND cuts strings at NUL, and
// takes a quoted string across lines).
func checkText(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("string %q is not valid UTF-8", s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			what := ""
			switch c {
			case 0:
				what = " (NUL: BIND would silently cut the string there)"
			case '\n', '\r':
				what = " (line break)"
			case '\t':
				what = " (tab)"
			}
			return fmt.Errorf("string %q contains control character U+%04X%s at byte %d; named.conf strings may not contain control characters", s, c, what, i)
		}
	}
	return nil
}

// quote writes s as a named.conf quoted string whose value, as BIND 9's
// lexer reads it, is exactly s. See doc.go for the rules.
func quote(s string) (string, error) {
	if err := checkText(s); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	run := 0 // backslashes just written
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			run++
			b.WriteByte(c)
			continue
		case '"':
			if run%2 == 1 {
				return "", oddBackslash(s)
			}
			b.WriteString(`\"`)
		default:
			b.WriteByte(c)
		}
		run = 0
	}
	if run%2 == 1 {
		return "", oddBackslash(s)
	}
	b.WriteByte('"')
	return b.String(), nil
}

func oddBackslash(s string) error {
	return fmt.Errorf("string %q cannot be written in named.conf: BIND reads a single backslash before a double quote or at the end of a string as an escape, and has no way to express it", s)
}
