package agent

import (
	"encoding/base64"
	"fmt"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// Algorithms BIND accepts for TSIG keys.
var algorithms = map[string]bool{
	"hmac-md5": true, "hmac-sha1": true, "hmac-sha224": true,
	"hmac-sha256": true, "hmac-sha384": true, "hmac-sha512": true,
}

func validAlgorithm(a string) bool { return algorithms[strings.ToLower(a)] }

// DefaultAlgorithm is used when neither the config nor the Secret names one.
const DefaultAlgorithm = "hmac-sha256"

// Key is a TSIG key statement.
type Key struct {
	Name      string
	Algorithm string
	Secret    string // base64
}

// KeyStatement renders `key "<name>" { algorithm <alg>; secret "<b64>"; };`
// after validating the name, the algorithm and the base64 material.
func KeyStatement(k Key) (string, error) {
	if err := checkName(k.Name); err != nil {
		return "", fmt.Errorf("key name: %w", err)
	}
	alg := strings.ToLower(k.Algorithm)
	if alg == "" {
		alg = DefaultAlgorithm
	}
	if !validAlgorithm(alg) {
		return "", fmt.Errorf("key %q: %q is not a TSIG algorithm BIND knows", k.Name, k.Algorithm)
	}
	raw, err := base64.StdEncoding.DecodeString(k.Secret)
	if err != nil || len(raw) == 0 {
		return "", fmt.Errorf("key %q: secret is not valid base64", k.Name)
	}
	b, err := namedconf.Format(namedconf.B([]namedconf.Word{namedconf.Kw("key"), namedconf.Str(k.Name)},
		namedconf.S(namedconf.Kw("algorithm"), namedconf.Kw(alg)),
		namedconf.S(namedconf.Kw("secret"), namedconf.Str(k.Secret))))
	if err != nil {
		return "", fmt.Errorf("key %q: %w", k.Name, err)
	}
	return string(b), nil
}

// ParseKeys reads the key statements of a named.conf fragment such as a
// key.conf or rndc.key: `key "name" { algorithm x; secret "y"; };`. Comments
// (#, //, /* */) are skipped; other statements are ignored.
func ParseKeys(text string) ([]Key, error) {
	toks, err := tokenize(text)
	if err != nil {
		return nil, err
	}
	var keys []Key
	for i := 0; i < len(toks); i++ {
		if toks[i].text != "key" || toks[i].quoted {
			continue
		}
		if i+2 >= len(toks) || toks[i+2].text != "{" || toks[i+2].quoted {
			return nil, fmt.Errorf("line %d: want key \"<name>\" { ... };", toks[i].line)
		}
		k := Key{Name: toks[i+1].text}
		j := i + 3
		for ; j < len(toks) && !(toks[j].text == "}" && !toks[j].quoted); j++ {
			if j+2 >= len(toks) || toks[j+2].text != ";" {
				return nil, fmt.Errorf("line %d: want <option> <value>; inside key %q", toks[j].line, k.Name)
			}
			switch toks[j].text {
			case "algorithm":
				k.Algorithm = strings.ToLower(toks[j+1].text)
			case "secret":
				k.Secret = toks[j+1].text
			}
			j += 2
		}
		if j >= len(toks) {
			return nil, fmt.Errorf("key %q: missing }", k.Name)
		}
		if k.Algorithm == "" {
			k.Algorithm = DefaultAlgorithm
		}
		if _, err := base64.StdEncoding.DecodeString(k.Secret); err != nil || k.Secret == "" {
			return nil, fmt.Errorf("key %q: secret is not valid base64", k.Name)
		}
		keys = append(keys, k)
		i = j
	}
	return keys, nil
}

// FindKey returns the key called name in a key file's text.
func FindKey(text, name string) (Key, error) {
	keys, err := ParseKeys(text)
	if err != nil {
		return Key{}, err
	}
	for _, k := range keys {
		if strings.EqualFold(strings.TrimSuffix(k.Name, "."), strings.TrimSuffix(name, ".")) {
			return k, nil
		}
	}
	return Key{}, fmt.Errorf("no key %q in the file", name)
}

type token struct {
	text   string
	quoted bool
	line   int
}

func tokenize(s string) ([]token, error) {
	var toks []token
	line := 1
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#' || (c == '/' && i+1 < len(s) && s[i+1] == '/'):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated comment", line)
			}
			line += strings.Count(s[i:i+2+end], "\n")
			i += end + 4
		case c == '{' || c == '}' || c == ';':
			toks = append(toks, token{text: string(c), line: line})
			i++
		case c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				if s[j] == '\n' {
					line++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("line %d: unterminated string", line)
			}
			toks = append(toks, token{text: b.String(), quoted: true, line: line})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n{};\"", rune(s[j])) {
				j++
			}
			toks = append(toks, token{text: s[i:j], line: line})
			i = j
		}
	}
	return toks, nil
}
