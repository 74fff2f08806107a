package namedconf

import (
	"fmt"
	"path/filepath"
)

// Located is a statement read from a file, with the file it came from. Its
// Body holds the block's statements, includes expanded, each located too
// (Stmt.Body is left empty).
type Located struct {
	Stmt
	File string
	Body []Located
}

// Where is "file:line" of the statement.
func (l Located) Where() string { return fmt.Sprintf("%s:%d", l.File, l.Pos.Line) }

// ReadConf reads a named.conf and every file it includes (`include
// "path";`, at any depth), with ParseStatements. A relative include is
// resolved against base (named's working directory; the directory of the
// main file is the usual choice). read returns a file's content.
func ReadConf(file, base string, read func(string) ([]byte, error)) ([]Located, error) {
	r := &confReader{base: base, read: read, open: map[string]bool{}}
	return r.file(file, 0)
}

type confReader struct {
	base string
	read func(string) ([]byte, error)
	open map[string]bool // include cycle guard
}

// maxIncludeDepth bounds nested includes.
const maxIncludeDepth = 16

func (r *confReader) file(name string, depth int) ([]Located, error) {
	if depth > maxIncludeDepth {
		return nil, fmt.Errorf("%s: includes nested deeper than %d", name, maxIncludeDepth)
	}
	if r.open[name] {
		return nil, fmt.Errorf("%s: included from itself", name)
	}
	r.open[name] = true
	defer delete(r.open, name)
	data, err := r.read(name)
	if err != nil {
		return nil, err
	}
	stmts, err := ParseStatements(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	return r.locate(name, stmts, depth)
}

func (r *confReader) locate(file string, stmts []Stmt, depth int) ([]Located, error) {
	var out []Located
	for _, s := range stmts {
		if s.Name() == "include" && !s.Block {
			if len(s.Words) != 2 || s.Words[1].Kind != Quoted {
				return nil, fmt.Errorf("%s:%d: include takes one quoted file name", file, s.Pos.Line)
			}
			p := s.Words[1].Text
			if !filepath.IsAbs(p) {
				p = filepath.Join(r.base, p)
			}
			inc, err := r.file(p, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, s.Pos.Line, err)
			}
			out = append(out, inc...)
			continue
		}
		l := Located{Stmt: s, File: file}
		l.Stmt.Body = nil
		if s.Block {
			body, err := r.locate(file, s.Body, depth)
			if err != nil {
				return nil, err
			}
			l.Body = body
		}
		out = append(out, l)
	}
	return out, nil
}

// Plain returns the statement with its body as plain statements (for
// Format and the AML parsers).
func (l Located) Plain() Stmt {
	s := l.Stmt
	for _, b := range l.Body {
		s.Body = append(s.Body, b.Plain())
	}
	return s
}
