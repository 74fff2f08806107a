package namedconf

import (
	"fmt"
	"strings"
)

// KeyStmt is one key statement: key "<name>" { algorithm <a>; secret "<s>"; };
type KeyStmt struct {
	Name, Algorithm, Secret string
}

// ParseKeys reads the key statements of a named.conf fragment (a key.conf,
// an rndc.key) with the one named.conf lexer; other statements are
// skipped. Algorithm is lower case, "" when the statement has none.
func ParseKeys(text string) ([]KeyStmt, error) {
	stmts, err := ParseStatements(text)
	if err != nil {
		return nil, err
	}
	var out []KeyStmt
	for _, s := range stmts {
		if s.Name() != "key" {
			continue
		}
		if !s.Block || len(s.Words) != 2 || s.Words[1].Kind == List {
			return nil, fmt.Errorf("line %d: want key \"<name>\" { ... };", s.Pos.Line)
		}
		k := KeyStmt{Name: s.Words[1].Text}
		for _, o := range s.Body {
			if len(o.Words) != 2 || o.Block {
				return nil, fmt.Errorf("line %d: want <option> <value>; inside key %q", o.Pos.Line, k.Name)
			}
			switch o.Name() {
			case "algorithm":
				k.Algorithm = strings.ToLower(o.Arg(1))
			case "secret":
				k.Secret = o.Arg(1)
			}
		}
		out = append(out, k)
	}
	return out, nil
}
