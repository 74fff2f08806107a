package gen

import (
	"fmt"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// ZoneFile is one primary zone of a package as a whole zone file (never
// split), for checkers such as named-checkzone.
type ZoneFile struct {
	// Origin without the trailing dot; View is "" without views.
	Origin, View string
	Text         []byte
}

// ZoneFiles builds every primary zone of the package the way the renderer
// does (serial 1), sorted by view and origin.
func (p *Package) ZoneFiles() ([]ZoneFile, error) {
	items, err := p.Items()
	if err != nil {
		return nil, err
	}
	set, rs := model.Decode(items)
	clusters, brs := model.Build(set)
	rs = append(rs, brs...)
	if rs.HasErrors() {
		return nil, fmt.Errorf("generated package is invalid: %v", rs)
	}
	var out []ZoneFile
	for _, c := range clusters {
		for _, v := range c.Views {
			for _, z := range v.Zones {
				if z.Spec.Type != v1alpha1.ZonePrimary && z.Spec.Type != "" {
					continue
				}
				built, zrs := zonefile.Build(z)
				if built == nil {
					return nil, fmt.Errorf("zone %s: %v", z.Name, zrs)
				}
				out = append(out, ZoneFile{Origin: strings.TrimSuffix(z.Name, "."), View: v.Name, Text: built.Text(1)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].View != out[j].View {
			return out[i].View < out[j].View
		}
		return out[i].Origin < out[j].Origin
	})
	return out, nil
}
