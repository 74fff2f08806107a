package model

import (
	"bytes"
	"strings"
)

// mayHaveDuplicateKeys is a conservative pre-filter for CheckDuplicateKeys:
// false only when the document certainly has no key written twice in one
// mapping, so the YAML library's full parse (the authority, and most of the
// cost) runs only when true. It follows block mappings by indentation, list
// items, and flow mappings on one line; anything it does not follow for
// certain (anchors, merge keys, complex keys, block scalars, nested flow
// mappings, multi-line flow collections, tabs) answers true.
func mayHaveDuplicateKeys(doc []byte) bool {
	type level struct {
		indent int
		keys   map[string]bool
	}
	var stack []level
	// add records key at indent; true when the mapping already has it.
	add := func(indent int, key string) bool {
		for len(stack) > 0 && stack[len(stack)-1].indent > indent {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 || stack[len(stack)-1].indent < indent {
			stack = append(stack, level{indent, map[string]bool{}})
		}
		m := stack[len(stack)-1].keys
		if m[key] {
			return true
		}
		m[key] = true
		return false
	}
	// item starts a new list element whose mapping is at indent.
	item := func(indent int) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
	}
	for _, line := range bytes.Split(doc, []byte("\n")) {
		s := string(bytes.TrimRight(line, " \r"))
		t := strings.TrimLeft(s, " ")
		if t == "" || t[0] == '#' || t == "---" || t == "..." {
			continue
		}
		if strings.ContainsAny(t, "\t&*|>?") || strings.Contains(t, "<<") {
			return true
		}
		indent := len(s) - len(t)
		for strings.HasPrefix(t, "- ") || t == "-" {
			indent += 2
			item(indent)
			t = strings.TrimLeft(strings.TrimPrefix(t, "-"), " ")
			if t == "" {
				break
			}
		}
		if t == "" {
			continue
		}
		if t[0] == '{' {
			if flowDuplicate(t) {
				return true
			}
			continue
		}
		if t[0] == '[' {
			if strings.Contains(t, "{") || !strings.HasSuffix(strings.TrimSpace(stripComment(t)), "]") {
				return true
			}
			continue
		}
		key, rest, ok := blockKey(t)
		if !ok {
			continue // a scalar (list item, continued plain scalar)
		}
		if add(indent, key) {
			return true
		}
		rest = strings.TrimSpace(stripComment(rest))
		switch {
		case strings.HasPrefix(rest, "{"):
			if flowDuplicate(rest) {
				return true
			}
		case strings.HasPrefix(rest, "["):
			if strings.Contains(rest, "{") || !strings.HasSuffix(rest, "]") {
				return true
			}
		case strings.HasPrefix(rest, `"`) || strings.HasPrefix(rest, "'"):
			if !closedQuote(rest) {
				return true // a quoted scalar over several lines
			}
		}
	}
	return false
}

// blockKey splits `key: rest` (key plain or quoted); ok is false for a line
// that is no key.
func blockKey(t string) (key, rest string, ok bool) {
	if t == "" {
		return "", "", false
	}
	if t[0] == '"' || t[0] == '\'' {
		q := t[0]
		end := strings.IndexByte(t[1:], q)
		if end < 0 || strings.Contains(t[:end+1], `\`) {
			return "", "", false
		}
		after := t[end+2:]
		if !strings.HasPrefix(after, ":") {
			return "", "", false
		}
		return t[1 : end+1], after[1:], true
	}
	i := strings.Index(t, ": ")
	if i < 0 {
		if strings.HasSuffix(t, ":") {
			return t[:len(t)-1], "", true
		}
		return "", "", false
	}
	return t[:i], t[i+2:], true
}

// flowDuplicate reports whether a one-line flow mapping {a: 1, b: [x, y]}
// may hold a key twice: true for any duplicate, nested mapping, or text it
// does not read to its closing brace.
func flowDuplicate(t string) bool {
	depth := 0
	var quote byte
	keys := map[string]bool{}
	start := 1
	end := -1
	part := func(p string) bool {
		p = strings.TrimSpace(p)
		if p == "" {
			return false
		}
		i := strings.Index(p, ":")
		if i < 0 {
			return true
		}
		k := strings.Trim(strings.TrimSpace(p[:i]), `"'`)
		if keys[k] {
			return true
		}
		keys[k] = true
		return false
	}
	for i := 0; i < len(t) && end < 0; i++ {
		c := t[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '{':
			depth++
			if depth > 1 {
				return true
			}
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '}':
			depth--
			if depth == 0 {
				if part(t[start:i]) {
					return true
				}
				end = i
			}
		case c == ',' && depth == 1:
			if part(t[start:i]) {
				return true
			}
			start = i + 1
		}
	}
	if end < 0 {
		return true
	}
	rest := strings.TrimSpace(stripComment(t[end+1:]))
	return rest != ""
}

// stripComment cuts a " #" comment outside quotes.
func stripComment(t string) string {
	var quote byte
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || t[i-1] == ' '):
			return t[:i]
		}
	}
	return t
}

// closedQuote reports whether a quoted scalar ends on its line.
func closedQuote(t string) bool {
	q := t[0]
	for i := 1; i < len(t); i++ {
		if t[i] == '\\' && q == '"' {
			i++
			continue
		}
		if t[i] == q {
			return true
		}
	}
	return false
}
