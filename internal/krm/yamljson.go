package krm

import (
	"bytes"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// yamlToJSON is yaml.YAMLToJSON (yaml.v2, then encoding/json) with a fast
// path for the YAML that packages are made of: block mappings and
// sequences of printable ASCII, plain scalars that can only be strings,
// decimal integers, and quoted strings without escapes other than
// \" and \\. The fast path decodes the document straight to the JSON
// yaml.YAMLToJSON writes (keys sorted, strings escaped as encoding/json
// does); on anything else — a tab, a non-ASCII byte, a block scalar, an
// anchor, a tag, a flow collection that is not empty, a plain scalar that
// YAML 1.1 could read as a bool, float or timestamp, a duplicate key, any
// doubt — it hands the whole document to yaml.YAMLToJSON.
// TestYAMLToJSONMatches holds both to the same bytes.
func yamlToJSON(doc []byte) ([]byte, error) {
	if js, ok := fastYAMLToJSON(doc); ok {
		return js, nil
	}
	return yaml.YAMLToJSON(doc)
}

// yline is one content line: its indent and its text after the indent,
// comments and trailing blanks included.
type yline struct {
	ind  int
	text string
}

// ynode is a decoded value: a mapping (keys), a sequence (items) or a
// scalar already written as JSON.
type ynode struct {
	kind  byte // 'm', 's' or 'v'
	keys  []string
	vals  []*ynode
	items []*ynode
	json  string
}

type yparser struct {
	lines []yline
	pos   int
}

func fastYAMLToJSON(doc []byte) ([]byte, bool) {
	for _, c := range doc {
		if (c < 0x20 && c != '\n') || c >= 0x7f {
			return nil, false
		}
	}
	p := &yparser{}
	for len(doc) > 0 {
		var l []byte
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			l, doc = doc[:i], doc[i+1:]
		} else {
			l, doc = doc, nil
		}
		t := bytes.TrimLeft(l, " ")
		if len(bytes.TrimRight(t, " ")) == 0 || t[0] == '#' {
			continue
		}
		ind := len(l) - len(t)
		if ind == 0 && (bytes.HasPrefix(t, []byte("---")) || bytes.HasPrefix(t, []byte("...")) || t[0] == '%') {
			return nil, false
		}
		p.lines = append(p.lines, yline{ind: ind, text: string(t)})
	}
	if len(p.lines) == 0 || p.lines[0].ind != 0 || isItem(p.lines[0].text) {
		return nil, false
	}
	n, ok := p.mapping(0)
	if !ok || p.pos != len(p.lines) {
		return nil, false
	}
	var b bytes.Buffer
	b.Grow(len(doc))
	n.write(&b)
	return b.Bytes(), true
}

func isItem(t string) bool {
	return t == "-" || strings.HasPrefix(t, "- ")
}

// mapping reads a block mapping whose keys are at column ind.
func (p *yparser) mapping(ind int) (*ynode, bool) {
	n := &ynode{kind: 'm'}
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		if l.ind < ind {
			break
		}
		if l.ind > ind || isItem(l.text) {
			return nil, false
		}
		key, rest, ok := cutKey(l.text)
		if !ok || slices.Contains(n.keys, key) {
			return nil, false
		}
		p.pos++
		v, ok := p.value(ind, rest, true)
		if !ok {
			return nil, false
		}
		n.keys = append(n.keys, key)
		n.vals = append(n.vals, v)
	}
	return n, true
}

// value reads what follows a key or a sequence dash at column ind: rest on
// the line, or a block on the lines below. inMap allows a sequence at ind
// itself (a mapping's value, "key:\n- a").
func (p *yparser) value(ind int, rest string, inMap bool) (*ynode, bool) {
	if rest != "" {
		v, ok := scalar(rest)
		if !ok {
			return nil, false
		}
		// A more indented line below would continue a plain scalar.
		if p.pos < len(p.lines) && p.lines[p.pos].ind > ind {
			return nil, false
		}
		return v, true
	}
	if p.pos < len(p.lines) {
		next := p.lines[p.pos]
		switch {
		case next.ind > ind && isItem(next.text):
			return p.sequence(next.ind)
		case next.ind > ind:
			return p.mapping(next.ind)
		case next.ind == ind && inMap && isItem(next.text):
			return p.sequence(ind)
		}
	}
	return &ynode{kind: 'v', json: "null"}, true
}

// sequence reads a block sequence whose dashes are at column ind.
func (p *yparser) sequence(ind int) (*ynode, bool) {
	n := &ynode{kind: 's'}
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		if l.ind < ind || (l.ind == ind && !isItem(l.text)) {
			break
		}
		if l.ind > ind {
			return nil, false
		}
		rest := strings.TrimLeft(strings.TrimPrefix(l.text, "-"), " ")
		col := ind + len(l.text) - len(rest)
		if rest == "" || rest[0] == '#' {
			p.pos++
			v, ok := p.value(ind, "", false)
			if !ok {
				return nil, false
			}
			n.items = append(n.items, v)
			continue
		}
		if isItem(rest) {
			return nil, false // "- - a": leave it to yaml.v2
		}
		if _, _, isKey := cutKey(rest); isKey {
			// "- key: value": a mapping whose keys are at col.
			p.lines[p.pos] = yline{ind: col, text: rest}
			v, ok := p.mapping(col)
			if !ok {
				return nil, false
			}
			n.items = append(n.items, v)
			continue
		}
		p.pos++
		v, ok := p.value(ind, rest, false)
		if !ok {
			return nil, false
		}
		n.items = append(n.items, v)
	}
	return n, true
}

// cutKey splits "key: rest" (or "key:") into a key that can only be a
// string and the rest of the line. Quoted keys and keys YAML 1.1 would
// read as anything but a string are refused.
func cutKey(t string) (key, rest string, ok bool) {
	i := 0
	for i < len(t) && isKeyChar(t[i]) {
		i++
	}
	if i == 0 || i >= len(t) || t[i] != ':' || !isLetter(t[0]) {
		return "", "", false
	}
	key = t[:i]
	if specialWord(key) || len(key) > maxKey {
		return "", "", false
	}
	rest = t[i+1:]
	if rest != "" && rest[0] != ' ' {
		return "", "", false
	}
	rest = strings.TrimLeft(rest, " ")
	if strings.HasPrefix(rest, "#") {
		rest = ""
	}
	return key, rest, true
}

// maxKey is below yaml.v2's limit on a simple key (1024 characters).
const maxKey = 1000

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyChar(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/'
}

// specialWord reports a word that yaml.v2 resolves to something other than
// a string (any case, to be safe).
func specialWord(s string) bool {
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null", "~", "":
		return true
	}
	return false
}

// scalar decodes a scalar that is the rest of a line (comment included).
func scalar(t string) (*ynode, bool) {
	var s string
	var tail string
	switch c := t[0]; {
	case c == '"':
		var b strings.Builder
		i := 1
		for ; i < len(t) && t[i] != '"'; i++ {
			if t[i] == '\\' {
				if i+1 >= len(t) || (t[i+1] != '"' && t[i+1] != '\\') {
					return nil, false
				}
				i++
			}
			b.WriteByte(t[i])
		}
		if i >= len(t) {
			return nil, false
		}
		s, tail = b.String(), t[i+1:]
	case c == '\'':
		var b strings.Builder
		i := 1
		for ; i < len(t); i++ {
			if t[i] == '\'' {
				if i+1 < len(t) && t[i+1] == '\'' {
					i++
				} else {
					break
				}
			}
			b.WriteByte(t[i])
		}
		if i >= len(t) {
			return nil, false
		}
		s, tail = b.String(), t[i+1:]
	case c == '[' || c == '{':
		if e := strings.TrimRight(t, " "); e == "[]" || e == "{}" {
			return &ynode{kind: 'v', json: e}, true
		}
		return flowLine(t)
	case c == '-' || c >= '0' && c <= '9' || isLetter(c):
		v := t
		if i := strings.Index(v, " #"); i >= 0 {
			v = v[:i]
		}
		v = strings.TrimRight(v, " ")
		if strings.Contains(v, ": ") || strings.HasSuffix(v, ":") || strings.HasPrefix(v, "- ") {
			return nil, false
		}
		if !isLetter(c) {
			if isInt(v) {
				return &ynode{kind: 'v', json: v}, true
			}
			// yaml.v2 reads a plain scalar that starts with a digit or a
			// sign as an int, float or timestamp when it can; none of those
			// has a letter other than these.
			if !hasStringLetter(v) {
				return nil, false
			}
		} else if specialWord(v) {
			return nil, false
		}
		return &ynode{kind: 'v', json: jsonString(v)}, true
	default:
		return nil, false
	}
	tail = strings.TrimLeft(tail, " ")
	if tail != "" && tail[0] != '#' {
		return nil, false
	}
	if tail != "" && len(t) > len(tail) && t[len(t)-len(tail)-1] != ' ' {
		return nil, false // "#" right after the quote
	}
	return &ynode{kind: 'v', json: jsonString(s)}, true
}

// flowLine decodes a flow collection that is the rest of a line:
// ["a", 'b', c] or {name: "www", values: ["192.0.2.1"]}, nested. Keys are
// plain words as in block mappings; plain entries may not hold any flow or
// YAML indicator; empty entries, a trailing comma, a quoted key and a
// collection over several lines are left to yaml.v2.
func flowLine(t string) (*ynode, bool) {
	n, i, ok := flow(t, 0)
	if !ok {
		return nil, false
	}
	tail := strings.TrimLeft(t[i:], " ")
	if tail != "" && (tail[0] != '#' || t[i] != ' ') {
		return nil, false
	}
	return n, true
}

// flow decodes the collection that starts at t[i] ('[' or '{') and returns
// the index after its closing bracket.
func flow(t string, i int) (*ynode, int, bool) {
	isMap := t[i] == '{'
	closer := byte(']')
	n := &ynode{kind: 's'}
	if isMap {
		closer = '}'
		n.kind = 'm'
	}
	i++
	skip := func() {
		for i < len(t) && t[i] == ' ' {
			i++
		}
	}
	skip()
	if i < len(t) && t[i] == closer {
		return n, i + 1, true
	}
	for {
		skip()
		if i >= len(t) {
			return nil, 0, false
		}
		if isMap {
			k := i
			for i < len(t) && isKeyChar(t[i]) {
				i++
			}
			key := t[k:i]
			if key == "" || !isLetter(key[0]) || specialWord(key) || len(key) > maxKey || i+1 >= len(t) || t[i] != ':' || t[i+1] != ' ' || slices.Contains(n.keys, key) {
				return nil, 0, false
			}
			i += 2
			skip()
			n.keys = append(n.keys, key)
		}
		if i >= len(t) {
			return nil, 0, false
		}
		var v *ynode
		switch t[i] {
		case '[', '{':
			var ok bool
			v, i, ok = flow(t, i)
			if !ok {
				return nil, 0, false
			}
		default:
			start := i
			switch t[i] {
			case '"':
				for i++; i < len(t) && t[i] != '"'; i++ {
					if t[i] == '\\' {
						i++
					}
				}
				i++
			case '\'':
				for i++; i < len(t); i++ {
					if t[i] == '\'' {
						if i+1 < len(t) && t[i+1] == '\'' {
							i++
							continue
						}
						break
					}
				}
				i++
			default:
				for i < len(t) && t[i] != ',' && t[i] != closer {
					if strings.IndexByte("[]{}#:'\"&*!|>%@`?", t[i]) >= 0 {
						return nil, 0, false
					}
					i++
				}
			}
			if i > len(t) {
				return nil, 0, false
			}
			item := strings.TrimRight(t[start:i], " ")
			if item == "" {
				return nil, 0, false
			}
			var ok bool
			v, ok = scalar(item)
			if !ok || v.kind != 'v' {
				return nil, 0, false
			}
		}
		if isMap {
			n.vals = append(n.vals, v)
		} else {
			n.items = append(n.items, v)
		}
		skip()
		if i >= len(t) {
			return nil, 0, false
		}
		if t[i] == closer {
			return n, i + 1, true
		}
		if t[i] != ',' {
			return nil, 0, false
		}
		i++
		skip()
		if i >= len(t) || t[i] == closer {
			return nil, 0, false
		}
	}
}

// hasStringLetter reports a letter that no int, float or timestamp of
// yaml.v2 contains (hex digits, 0x/0o/0b prefixes, exponents and the T and
// Z of timestamps aside).
func hasStringLetter(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; isLetter(c) && !strings.ContainsRune("abcdefABCDEFxXoOtTzZ", rune(c)) {
			return true
		}
	}
	return false
}

// isInt is a decimal integer that yaml.v2 reads as an int and
// encoding/json writes back unchanged: an optional "-", no leading zero,
// at most 18 digits.
func isInt(v string) bool {
	d := strings.TrimPrefix(v, "-")
	if d == "" || len(d) > 18 || (d[0] == '0' && (len(d) > 1 || len(v) > 1)) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// jsonString is encoding/json's encoding of a printable ASCII string (HTML
// characters escaped).
func jsonString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '<':
			b.WriteString(`\u003c`)
		case '>':
			b.WriteString(`\u003e`)
		case '&':
			b.WriteString(`\u0026`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// write writes n as encoding/json writes the map[string]any yaml.v2 gives:
// keys sorted.
func (n *ynode) write(b *bytes.Buffer) {
	switch n.kind {
	case 'v':
		b.WriteString(n.json)
	case 's':
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.write(b)
		}
		b.WriteByte(']')
	case 'm':
		idx := make([]int, len(n.keys))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, c int) int { return strings.Compare(n.keys[a], n.keys[c]) })
		b.WriteByte('{')
		for j, i := range idx {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(jsonString(n.keys[i]))
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	}
}
