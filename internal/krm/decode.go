package krm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/diag"
)

// header is what classify reads of an item.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

func (h *header) id() string {
	return idString(h.APIVersion, h.Kind, h.Metadata.Namespace, h.Metadata.Name)
}

// addDir records the package directory of h's file (kpt's package-path
// annotation), for locations.
func (h *header) addDir(dirs map[string]string) {
	if d := h.Metadata.Annotations[pkgPathAnnotation]; d != "" {
		if src := h.source(); src.File != "" {
			dirs[src.File] = d
		}
	}
}

func (h *header) source() diag.Source {
	return sourceOf(diag.ObjectRef{APIVersion: h.APIVersion, Kind: h.Kind, Namespace: h.Metadata.Namespace, Name: h.Metadata.Name}, h.Metadata.Annotations)
}

// decodeJSON decodes one item (a standalone YAML document) to the JSON the
// model reads, with sigs.k8s.io/yaml in strict mode: a key set twice in one
// mapping (two `records:` blocks) is an error naming the field, not a
// silent last-one-wins.
func decodeJSON(doc []byte) ([]byte, error) {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		if path, key, ok := duplicateKey(doc); ok {
			return nil, &duplicateFieldError{path: path, key: key}
		}
		return nil, err
	}
	return js, nil
}

// duplicateFieldError is a key set twice in one mapping.
type duplicateFieldError struct {
	path, key string
}

func (e *duplicateFieldError) Error() string {
	return fmt.Sprintf("duplicate field %q: a field may be set once in a mapping; merge the two or delete one", e.key)
}

// fieldOf is the field path an error names, if any.
func fieldOf(err error) string {
	var d *duplicateFieldError
	if errors.As(err, &d) {
		return d.path
	}
	return ""
}

// duplicateKey finds the first key set twice in a mapping of doc, walking
// yaml.v3's node tree (which keeps both), and its field path
// ("spec.records", "spec.records[2].name"). It is only called once strict
// decoding has failed.
func duplicateKey(doc []byte) (path, key string, ok bool) {
	var n yaml3.Node
	if yaml3.Unmarshal(doc, &n) != nil {
		return "", "", false
	}
	return findDuplicate(&n, "")
}

func findDuplicate(n *yaml3.Node, path string) (string, string, bool) {
	switch n.Kind {
	case yaml3.DocumentNode:
		for _, c := range n.Content {
			if p, k, ok := findDuplicate(c, path); ok {
				return p, k, ok
			}
		}
	case yaml3.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			p := k
			if path != "" {
				p = path + "." + k
			}
			if seen[k] {
				return p, k, true
			}
			seen[k] = true
			if p, k, ok := findDuplicate(n.Content[i+1], p); ok {
				return p, k, ok
			}
		}
	case yaml3.SequenceNode:
		for i, c := range n.Content {
			if p, k, ok := findDuplicate(c, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, k, ok
			}
		}
	}
	return "", "", false
}

// item is one item of a cut ResourceList: its text (a standalone YAML
// document), its JSON and its header.
type item struct {
	doc  []byte
	json []byte
	hdr  header
	role role
	// What writing the item needs of hdr (keep), so that hdr's maps can go:
	// its output id, and whether it is local-config already or has the
	// annotation at all.
	id                          string
	localConfig, hasLocalConfig bool
}

// keep records what writing the item needs of its header and drops the
// header (a package of 100k zones has 200k annotations).
func (it *item) keep() {
	it.id = it.hdr.id()
	a := it.hdr.Metadata.Annotations
	it.localConfig = isLocalConfig(a)
	_, it.hasLocalConfig = a[fn.KptLocalConfig]
	it.hdr = header{}
}

func decodeItem(doc []byte) (*item, error) {
	js, err := decodeJSON(doc)
	if err != nil {
		return nil, err
	}
	it := &item{doc: doc, json: js}
	if err := readHeader(js, &it.hdr); err != nil {
		return nil, err
	}
	return it, nil
}

// readHeader is json.Unmarshal(js, h) for JSON whose top-level keys are
// sorted, as sigs.k8s.io/yaml writes them: apiVersion, kind and metadata
// come before spec, so reading stops after metadata instead of scanning a
// zone's records.
func readHeader(js []byte, h *header) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	if t, err := dec.Token(); err != nil {
		return err
	} else if t != json.Delim('{') {
		return fmt.Errorf("an item must be a mapping, not %v", t)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case "apiVersion":
			err = dec.Decode(&h.APIVersion)
		case "kind":
			err = dec.Decode(&h.Kind)
		case "metadata":
			return dec.Decode(&h.Metadata)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// DecodeJSON is how fn-render reads one object (a standalone YAML
// document): strict, a key set twice is an error naming its field (see
// FieldOf). bind-fn plan reads its inputs with it, so a package fn-render
// refuses is refused by plan with the same error.
func DecodeJSON(doc []byte) ([]byte, error) { return decodeJSON(doc) }

// FieldOf is the field path a DecodeJSON error names ("" if none).
func FieldOf(err error) string { return fieldOf(err) }
