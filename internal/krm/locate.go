package krm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"

	"git.unkin.net/unkin/bind-fn/internal/diag"
)

// Locations. A result names its object, its field path and the object's
// file and document index (the kpt result's file.path and file.index); a
// user wants the line. Only whoever can read the file can say which line:
// bind-fn render and plan read the package, and a KRM function is told its
// package directory by kpt (internal.config.kubernetes.io/package-path).
// One reader, yaml.v3 (kyaml's, so kpt's), finds lines for all of them, so
// every tool names the same file:line for the same problem.

// pkgPathAnnotation is the absolute directory of the package an item was
// read from, which kpt (and bind-fn render) set on every item.
const pkgPathAnnotation = "internal.config.kubernetes.io/package-path"

// PackageFile reads a file of a package for locations: path (the item's
// path annotation) under dir (its package-path annotation). Only a local
// path under an absolute directory is read; anything else is not found.
func PackageFile(dir, path string) ([]byte, bool) {
	if !filepath.IsAbs(dir) || !filepath.IsLocal(filepath.FromSlash(path)) {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	return b, err == nil
}

// fileDocs is one file's YAML documents, decoded as far as a lookup needed.
type fileDocs struct {
	dec  *yaml3.Decoder
	docs []*yaml3.Node
	done bool
}

func (f *fileDocs) doc(i int) *yaml3.Node {
	for !f.done && len(f.docs) <= i {
		var n yaml3.Node
		if err := f.dec.Decode(&n); err != nil {
			f.done = true
			break
		}
		f.docs = append(f.docs, &n)
	}
	if i < len(f.docs) {
		return f.docs[i]
	}
	return nil
}

// Locator finds the lines of results in the files they name.
type Locator struct {
	// Read gives a file's bytes by the result's file name.
	Read  func(file string) ([]byte, bool)
	files map[string]*fileDocs
}

// Locate sets the Line of every error and warning whose file it can read
// (info results, one per zone, would cost a decode of every file for
// nothing a user must fix).
func (l *Locator) Locate(rs diag.Results) {
	for i := range rs {
		r := &rs[i]
		if r.Severity == diag.Info || r.Source.File == "" || r.Source.Line > 0 {
			continue
		}
		if d := l.doc(r.Source.File, r.Source.Index); d != nil {
			r.Source.Line = lineOf(d, r.Source.Ref, r.Field)
		}
	}
}

func (l *Locator) doc(file string, index int) *yaml3.Node {
	if l.files == nil {
		l.files = map[string]*fileDocs{}
	}
	f, ok := l.files[file]
	if !ok {
		if b, found := l.Read(file); found {
			f = &fileDocs{dec: yaml3.NewDecoder(bytes.NewReader(b))}
		}
		l.files[file] = f
	}
	if f == nil {
		return nil
	}
	return f.doc(index)
}

// LineOf is the line, from 1, of field ("spec.records[2].values[0]") in
// the index-th YAML document of data; 0 when data has no such document or
// that document is not the object ref names (the file changed since it was
// read). A field that is not in the document (one that is missing) is
// placed at the nearest enclosing field that is.
func LineOf(data []byte, index int, ref diag.ObjectRef, field string) int {
	f := &fileDocs{dec: yaml3.NewDecoder(bytes.NewReader(data))}
	if d := f.doc(index); d != nil {
		return lineOf(d, ref, field)
	}
	return 0
}

func lineOf(doc *yaml3.Node, ref diag.ObjectRef, field string) int {
	n := doc
	if n.Kind == yaml3.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml3.MappingNode || !sameObject(n, ref) {
		return 0
	}
	line := n.Line
	for _, seg := range fieldSegments(field) {
		switch {
		case seg.key != "" && n.Kind == yaml3.MappingNode:
			k, v := mapEntry(n, seg.key)
			if k == nil {
				return line
			}
			line, n = k.Line, v
		case seg.key == "" && n.Kind == yaml3.SequenceNode && seg.index < len(n.Content):
			n = n.Content[seg.index]
			line = n.Line
		default:
			return line
		}
	}
	return line
}

// sameObject says whether the mapping is the object ref names (by kind and
// name; an empty ref matches anything).
func sameObject(m *yaml3.Node, ref diag.ObjectRef) bool {
	str := func(n *yaml3.Node, k string) string {
		if _, v := mapEntry(n, k); v != nil && v.Kind == yaml3.ScalarNode {
			return v.Value
		}
		return ""
	}
	if ref.Kind != "" && str(m, "kind") != ref.Kind {
		return false
	}
	if ref.Name != "" {
		_, meta := mapEntry(m, "metadata")
		if meta == nil || str(meta, "name") != ref.Name {
			return false
		}
	}
	return true
}

// mapEntry is the key and value of key in a mapping: the last, for a key
// set twice (the one a duplicate-field error is about).
func mapEntry(m *yaml3.Node, key string) (k, v *yaml3.Node) {
	if m.Kind != yaml3.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			k, v = m.Content[i], m.Content[i+1]
		}
	}
	return k, v
}

// segment is one step of a field path: a key, or (key "") an index.
type segment struct {
	key   string
	index int
}

// fieldSegments splits "spec.records[2].values[0]" into spec, records, [2],
// values, [0]. Anything after a malformed index is ignored.
func fieldSegments(field string) []segment {
	var out []segment
	for _, part := range strings.Split(field, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, segment{key: name})
		}
		for rest != "" {
			num, after, ok := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			if !ok || err != nil || i < 0 {
				return out
			}
			out = append(out, segment{index: i})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out
}

// parserContextErrors are the yaml.v3 parser errors located by the start
// of the construct they are in (its context mark), whose line yaml.v3
// reports from 0 where its scanner errors count from 1.
var parserContextErrors = map[string]bool{
	"did not find expected ',' or ']'":    true,
	"did not find expected ',' or '}'":    true,
	"did not find expected '-' indicator": true,
	"did not find expected key":           true,
	"did not find expected node content":  true,
	"found undefined tag handle":          true,
}

// yamlLine is the "yaml: line N: " of a yaml.v3 syntax error.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// SyntaxError is the first YAML syntax error of a file, as "file:line:
// message" (yaml.v3's reading, which is kpt's), or nil when every document
// of the file parses. bind-fn render and plan report a file they cannot
// read with it, so both name the same line.
func SyntaxError(file string, data []byte) error {
	dec := yaml3.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml3.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			msg := err.Error()
			if m := yamlLine.FindStringSubmatch(msg); m != nil {
				line, _ := strconv.Atoi(m[1])
				problem := msg[len(m[0]):]
				if parserContextErrors[problem] {
					// yaml.v3 gives these the line of the construct they
					// are in (a flow sequence left open), counted from 0.
					line++
				}
				return fmt.Errorf("%s:%d: invalid YAML: %s", file, line, problem)
			}
			return fmt.Errorf("%s: invalid YAML: %s", file, strings.TrimPrefix(msg, "yaml: "))
		}
	}
}
