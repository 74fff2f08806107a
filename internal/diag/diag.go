// Package diag carries user-facing problems: what is wrong, with which object,
// at which field path, in which file. It is the one result type of the model,
// the validator and the renderer; the kpt and Crossplane adapters translate it.
package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Severity of a result.
type Severity string

// Severities, as kpt names them.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// ObjectRef identifies the object a result is about.
type ObjectRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
}

// RefOf is the reference of an object decoded into a map: its apiVersion,
// kind and metadata's namespace and name (empty where absent or not a
// string).
func RefOf(obj map[string]any) ObjectRef {
	meta, _ := obj["metadata"].(map[string]any)
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	return ObjectRef{APIVersion: str(obj, "apiVersion"), Kind: str(obj, "kind"), Namespace: str(meta, "namespace"), Name: str(meta, "name")}
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s/%s", r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name)
}

// Source is where an object came from.
type Source struct {
	Ref ObjectRef
	// File is the config.kubernetes.io/path (or internal.config...) annotation.
	File string
	// Index is the object's index in File (its YAML document, from 0).
	Index int
	// Line is the line in File of the result's field (or of the object),
	// from 1; 0 when unknown. Only an adapter that can read File sets it.
	Line int
}

// Location is where a user finds the problem: "file:line" when the line is
// known, else "file" for a file's first object and "file, document N",
// counting from 1, for a later one; "" when no file is known.
func (s Source) Location() string {
	switch {
	case s.File == "":
		return ""
	case s.Line > 0:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	case s.Index > 0:
		return fmt.Sprintf("%s, document %d", s.File, s.Index+1)
	}
	return s.File
}

// Result is one problem.
type Result struct {
	Severity Severity
	Source   Source
	// Field is the path inside the object: spec.records[5].values[0].
	Field   string
	Message string
}

func (r Result) String() string {
	var b strings.Builder
	b.WriteString(string(r.Severity))
	b.WriteString(": ")
	b.WriteString(r.Source.Ref.String())
	if loc := r.Source.Location(); loc != "" {
		fmt.Fprintf(&b, " (%s)", loc)
	}
	if r.Field != "" {
		b.WriteString(" ")
		b.WriteString(r.Field)
	}
	b.WriteString(": ")
	b.WriteString(r.Message)
	return b.String()
}

// Results is a list of results.
type Results []Result

// Errorf appends an error about src at field.
func (rs *Results) Errorf(src Source, field, format string, args ...any) {
	*rs = append(*rs, Result{Severity: Error, Source: src, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Warnf appends a warning about src at field.
func (rs *Results) Warnf(src Source, field, format string, args ...any) {
	*rs = append(*rs, Result{Severity: Warning, Source: src, Field: field, Message: fmt.Sprintf(format, args...)})
}

// HasErrors reports whether any result is an error.
func (rs Results) HasErrors() bool {
	for _, r := range rs {
		if r.Severity == Error {
			return true
		}
	}
	return false
}

// Sort orders results by file, index, kind, name, field and message, so
// output is deterministic whatever order the checks ran in.
func (rs Results) Sort() {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		ka := []string{a.Source.File, fmt.Sprintf("%09d", a.Source.Index), a.Source.Ref.Kind, a.Source.Ref.Namespace, a.Source.Ref.Name, a.Field, a.Message}
		kb := []string{b.Source.File, fmt.Sprintf("%09d", b.Source.Index), b.Source.Ref.Kind, b.Source.Ref.Namespace, b.Source.Ref.Name, b.Field, b.Message}
		for k := range ka {
			if ka[k] != kb[k] {
				return ka[k] < kb[k]
			}
		}
		return false
	})
}
