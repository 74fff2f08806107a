package model

import (
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"git.unkin.net/unkin/bind-fn/internal/diag"
)

// CheckDuplicateKeys reports every mapping key written twice in one input
// object's YAML (two records: blocks, say) as a located "duplicate field"
// error: YAML-to-JSON conversion keeps only the last, so the first would be
// lost without a word. Both KRM paths call it where they read an item's
// YAML; the Crossplane path gets objects, which cannot hold duplicates. A
// document that does not parse is left to the caller's reader.
func CheckDuplicateKeys(src diag.Source, doc []byte, rs *diag.Results) {
	if !mayHaveDuplicateKeys(doc) {
		return // certainly none: skip the full parse, most of the cost
	}
	var n yaml.Node
	if err := yaml.Unmarshal(doc, &n); err != nil {
		return
	}
	walkDuplicates(&n, "", func(path string, line, first int) {
		rs.Errorf(src, path, "duplicate field %q (line %d, first at line %d): YAML keeps only the last one, so the first would be lost; merge them into one", lastSegment(path), line, first)
	})
}

func walkDuplicates(n *yaml.Node, path string, report func(path string, line, first int)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkDuplicates(c, path, report)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkDuplicates(c, path+"["+strconv.Itoa(i)+"]", report)
		}
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if k.Kind == yaml.ScalarNode && k.Tag != "!!merge" {
				if first, dup := seen[k.Value]; dup {
					report(p, k.Line, first)
					continue
				}
				seen[k.Value] = k.Line
			}
			walkDuplicates(v, p, report)
		}
	case yaml.AliasNode:
	}
}
