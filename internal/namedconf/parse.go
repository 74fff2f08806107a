package namedconf

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// SyntaxError is a problem in parsed text, at a line and column (1-based,
// columns count characters).
type SyntaxError struct {
	Pos Pos
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
}

// maxDepth bounds brace nesting; real configurations use four or five.
const maxDepth = 64

// ParseStatements reads named.conf text into statements. It tokenizes the
// way BIND 9's lexer does (quoted strings with BIND's escape rule, // # and
// /* */ comments, braces and semicolons), so rendering the result with File
// gives text BIND reads as the same statements. It is stricter than BIND:
// bare words may hold only the characters Kw accepts, and quoted strings no
// control characters. Comments are dropped. It does not know BIND's grammar:
// which statements are allowed is for the caller to check.
func ParseStatements(src string) ([]Stmt, error) {
	p := &parser{lx: lexer{src: src, line: 1}}
	stmts, err := p.stmts(0, Pos{})
	if err != nil {
		return nil, err
	}
	return stmts, nil
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tBare
	tQuoted
	tOpen
	tClose
	tSemi
)

type token struct {
	kind tokKind
	text string
	pos  Pos
}

type parser struct {
	lx     lexer
	peeked *token
}

func (p *parser) next() (token, error) {
	if p.peeked != nil {
		t := *p.peeked
		p.peeked = nil
		return t, nil
	}
	return p.lx.next()
}

func (p *parser) unread(t token) { p.peeked = &t }

// stmts reads statements up to the end of text (depth 0) or the '}' closing
// the block opened at open.
func (p *parser) stmts(depth int, open Pos) ([]Stmt, error) {
	var out []Stmt
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case tEOF:
			if depth > 0 {
				return nil, &SyntaxError{t.pos, fmt.Sprintf("missing '}' for the '{' at %s", open)}
			}
			return out, nil
		case tClose:
			if depth == 0 {
				return nil, &SyntaxError{t.pos, "unexpected '}' with no open block"}
			}
			return out, nil
		}
		p.unread(t)
		s, err := p.stmt(depth)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
}

func (p *parser) stmt(depth int) (Stmt, error) {
	var s Stmt
	for {
		t, err := p.next()
		if err != nil {
			return Stmt{}, err
		}
		if s.Pos.Line == 0 {
			s.Pos = t.pos
		}
		switch t.kind {
		case tBare:
			s.Words = append(s.Words, Word{Kind: Bare, Text: t.text})
		case tQuoted:
			s.Words = append(s.Words, Word{Kind: Quoted, Text: t.text})
		case tSemi:
			if len(s.Words) == 0 {
				return Stmt{}, &SyntaxError{t.pos, "empty statement: ';' with nothing before it"}
			}
			return s, nil
		case tOpen:
			if depth+1 > maxDepth {
				return Stmt{}, &SyntaxError{t.pos, fmt.Sprintf("braces nested deeper than %d", maxDepth)}
			}
			body, err := p.stmts(depth+1, t.pos)
			if err != nil {
				return Stmt{}, err
			}
			after, err := p.next()
			if err != nil {
				return Stmt{}, err
			}
			if after.kind == tSemi {
				s.Block, s.Body = true, body
				return s, nil
			}
			// A list in the middle of a statement:
			// inet 127.0.0.1 allow { localhost; } keys { "rndc"; };
			p.unread(after)
			s.Words = append(s.Words, Word{Kind: List, Items: body})
		case tClose:
			return Stmt{}, &SyntaxError{t.pos, fmt.Sprintf("missing ';' before '}' (statement started at %s)", s.Pos)}
		case tEOF:
			return Stmt{}, &SyntaxError{t.pos, fmt.Sprintf("missing ';' at end of text (statement started at %s)", s.Pos)}
		}
	}
}

type lexer struct {
	src       string
	off       int
	line      int
	lineStart int
}

func (l *lexer) pos(off int) Pos {
	return Pos{Line: l.line, Col: utf8.RuneCountInString(l.src[l.lineStart:off]) + 1}
}

// advance moves to off, keeping line accounting.
func (l *lexer) advance(off int) {
	for i := l.off; i < off; i++ {
		if l.src[i] == '\n' {
			l.line++
			l.lineStart = i + 1
		}
	}
	l.off = off
}

func (l *lexer) errorf(at Pos, format string, args ...any) error {
	return &SyntaxError{at, fmt.Sprintf(format, args...)}
}

func (l *lexer) next() (token, error) {
	src := l.src
	for {
		// Whitespace, as BIND's lexer knows it.
		for l.off < len(src) && strings.IndexByte(" \t\r\n", src[l.off]) >= 0 {
			l.advance(l.off + 1)
		}
		if l.off >= len(src) {
			return token{kind: tEOF, pos: l.pos(l.off)}, nil
		}
		start := l.pos(l.off)
		c := src[l.off]
		switch {
		case c == '#' || strings.HasPrefix(src[l.off:], "//"):
			end := strings.IndexByte(src[l.off:], '\n')
			if end < 0 {
				l.advance(len(src))
			} else {
				l.advance(l.off + end)
			}
			continue
		case strings.HasPrefix(src[l.off:], "/*"):
			end := strings.Index(src[l.off+2:], "*/")
			if end < 0 {
				return token{}, l.errorf(start, "unterminated /* comment")
			}
			l.advance(l.off + 2 + end + 2)
			continue
		case c == '{':
			l.advance(l.off + 1)
			return token{kind: tOpen, pos: start}, nil
		case c == '}':
			l.advance(l.off + 1)
			return token{kind: tClose, pos: start}, nil
		case c == ';':
			l.advance(l.off + 1)
			return token{kind: tSemi, pos: start}, nil
		case c == '!':
			// BIND's lexer makes '!' a token of its own.
			l.advance(l.off + 1)
			return token{kind: tBare, text: "!", pos: start}, nil
		case c == '"':
			return l.quoted(start)
		}
		return l.bare(start)
	}
}

// quoted reads a quoted string the way BIND 9's lexer does: a backslash
// escapes the next character, an escaped '"' replaces its backslash, and
// every other backslash stays in the value.
func (l *lexer) quoted(start Pos) (token, error) {
	src := l.src
	var b []byte
	escaped := false
	for i := l.off + 1; i < len(src); i++ {
		c := src[i]
		if c == '"' {
			if escaped {
				// Overwrite the escaping backslash.
				b[len(b)-1] = '"'
				escaped = false
				continue
			}
			l.advance(i + 1)
			v := string(b)
			if err := checkText(v); err != nil {
				return token{}, l.errorf(start, "quoted %v", err)
			}
			return token{kind: tQuoted, text: v, pos: start}, nil
		}
		escaped = c == '\\' && !escaped
		b = append(b, c)
	}
	return token{}, l.errorf(start, "unterminated quoted string")
}

func (l *lexer) bare(start Pos) (token, error) {
	src := l.src
	i := l.off
	for i < len(src) {
		c := src[i]
		if strings.IndexByte(" \t\r\n{};\"!#", c) >= 0 {
			break
		}
		if c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*') {
			break
		}
		if !isKeywordByte(c) {
			r, _ := utf8.DecodeRuneInString(src[i:])
			return token{}, l.errorf(l.pos(i), "character %q is not allowed outside quotes (bare words may hold only %s); put the value in double quotes", r, keywordChars)
		}
		i++
	}
	text := src[l.off:i]
	l.advance(i)
	return token{kind: tBare, text: text, pos: start}, nil
}
