package gen

import (
	"fmt"

	"sigs.k8s.io/yaml"

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
			it, err := model.ItemOf(f, i, js)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", f, i, err)
			}
			out = append(out, it)
		}
	}
	return out, nil
}
