package model

import (
	"encoding/json"
	"testing"
)

// TestTypeErrorIndexed: a type error inside a list names the element
// (spec.records[2].ttl), not only the field (docs/design.md#nothing-refused).
func TestTypeErrorIndexed(t *testing.T) {
	cases := map[string]struct {
		reason, json, want string
	}{
		"records ttl": {reason: "the third record's ttl is a string", want: "spec.records[2].ttl",
			json: `{"apiVersion":"bind.unkin.net/v1alpha1","kind":"BindZone","metadata":{"name":"z","namespace":"dns"},"spec":{"zoneName":"a.example","records":[{"name":"a","type":"A","values":["192.0.2.1"]},{"name":"b","type":"A","ttl":60,"values":["192.0.2.2"]},{"name":"c","type":"A","ttl":"60","values":["192.0.2.3"]}]}}`},
		"values item": {reason: "a value that is a number", want: "spec.records[0].values[1]",
			json: `{"apiVersion":"bind.unkin.net/v1alpha1","kind":"BindZone","metadata":{"name":"z","namespace":"dns"},"spec":{"zoneName":"a.example","records":[{"name":"a","type":"A","values":["192.0.2.1",7]}]}}`},
		"plain field": {reason: "a field outside lists keeps its path", want: "spec.replicas",
			json: `{"apiVersion":"bind.unkin.net/v1alpha1","kind":"BindCluster","metadata":{"name":"c","namespace":"dns"},"spec":{"replicas":"two"}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var it Item
			var hdr struct {
				APIVersion, Kind string
				Metadata         struct{ Name, Namespace string }
			}
			_ = json.Unmarshal([]byte(tc.json), &hdr)
			it.Source.Ref.APIVersion, it.Source.Ref.Kind = hdr.APIVersion, hdr.Kind
			it.Source.Ref.Name, it.Source.Ref.Namespace = hdr.Metadata.Name, hdr.Metadata.Namespace
			it.JSON = []byte(tc.json)
			_, rs := Decode([]Item{it})
			if len(rs) != 1 || rs[0].Field != tc.want {
				t.Errorf("%s: got %v, want one error at %s", tc.reason, rs, tc.want)
			}
		})
	}
}
