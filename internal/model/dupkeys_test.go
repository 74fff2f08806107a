package model

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
)

func TestDuplicateKeys(t *testing.T) {
	cases := map[string]struct {
		reason string
		doc    string
		want   []string
	}{
		"none":    {reason: "a clean object", doc: "spec:\n  records:\n  - name: a\n"},
		"records": {reason: "two records: blocks (issue 10)", doc: "spec:\n  records:\n  - name: a\n  records:\n  - name: b\n", want: []string{"spec.records@4/2"}},
		"in list": {reason: "a duplicate inside a list item is located with its index", doc: "spec:\n  records:\n  - name: a\n  - name: b\n    name: c\n", want: []string{"spec.records[1].name@5/4"}},
		"flow":    {reason: "flow style too", doc: "spec: {zoneName: a, zoneName: b}\n", want: []string{"spec.zoneName@1/1"}},
		"quoted":  {reason: "a quoted key is the same key", doc: "metadata:\n  annotations: {}\n  \"annotations\": {}\n", want: []string{"metadata.annotations@3/2"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(tc.doc), &n); err != nil {
				t.Fatal(err)
			}
			var got []string
			walkDuplicates(&n, "", func(p string, l, f int) { got = append(got, dupString(p, l, f)) })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func dupString(path string, line, first int) string {
	return fmt.Sprintf("%s@%d/%d", path, line, first)
}
