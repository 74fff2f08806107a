package objects

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// ToMap returns an object as the generic map a KRM ResourceList carries,
// without its status (nor its claim templates' status): the typed structs
// serialise an empty status (a StatefulSet's `replicas: 0`) that is no part
// of desired state.
func ToMap(obj any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("cannot serialise %T: %w", obj, err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // integers stay integers
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("cannot serialise %T: %w", obj, err)
	}
	delete(m, "status")
	// A StatefulSet's claim templates carry an empty status each.
	if spec, ok := m["spec"].(map[string]any); ok {
		if vcts, ok := spec["volumeClaimTemplates"].([]any); ok {
			for _, v := range vcts {
				if pvc, ok := v.(map[string]any); ok {
					delete(pvc, "status")
				}
			}
		}
	}
	return m, nil
}

// YAML returns an object as YAML without its status, keys sorted.
func YAML(obj any) ([]byte, error) {
	m, err := ToMap(obj)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(m)
}
