package gen

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// Items are the package's objects as pipeline items (what the adapters hand
// the pipeline), with file and index set the way kpt would.
func (p *Package) Items() ([]model.Item, error) {
	var out []model.Item
	for _, f := range p.FileNames() {
		for i, d := range p.Files[f] {
			js, err := yaml.YAMLToJSON([]byte(d))
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", f, i, err)
			}
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(js, &meta); err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", f, i, err)
			}
			out = append(out, model.Item{
				Source: diag.Source{File: f, Index: i, Ref: diag.ObjectRef{APIVersion: meta.APIVersion, Kind: meta.Kind, Namespace: meta.Metadata.Namespace, Name: meta.Metadata.Name}},
				JSON:   js,
			})
		}
	}
	return out, nil
}
