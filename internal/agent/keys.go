package agent

import (
	"encoding/base64"
	"fmt"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// validAlgorithm reports a TSIG algorithm BIND accepts (vocab.TSIG).
func validAlgorithm(a string) bool {
	_, ok := vocab.TSIGByName(a)
	return ok
}

// DefaultAlgorithm is used when neither the config nor the Secret names one.
const DefaultAlgorithm = vocab.DefaultTSIG

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
	stmts, err := namedconf.ParseKeys(text) // the one named.conf lexer
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, st := range stmts {
		k := Key{Name: st.Name, Algorithm: st.Algorithm, Secret: st.Secret}
		if k.Algorithm == "" {
			k.Algorithm = DefaultAlgorithm
		}
		if _, err := base64.StdEncoding.DecodeString(k.Secret); err != nil || k.Secret == "" {
			return nil, fmt.Errorf("key %q: secret is not valid base64", k.Name)
		}
		keys = append(keys, k)
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
