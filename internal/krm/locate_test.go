package krm

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"

	"git.unkin.net/unkin/bind-fn/internal/diag"
)

const twoDocs = `# a comment
apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata:
  name: example-com
spec:
  zoneName: example.com
  records:
  - name: www
    type: A
    values:
    - 192.0.2.1
    - 192.0.2.300
---

apiVersion: bind.unkin.net/v1alpha1
kind: DNSRecord
metadata:
  name: api
spec:
  ttl: 30
  ttl: 60
  values: ["192.0.2.1", "192.0.2.2"]
`

func TestLineOf(t *testing.T) {
	zone := diag.ObjectRef{Kind: "BindZone", Name: "example-com"}
	rec := diag.ObjectRef{Kind: "DNSRecord", Name: "api"}
	cases := map[string]struct {
		reason string
		index  int
		ref    diag.ObjectRef
		field  string
		want   int
	}{
		"Value":        {reason: "a value of a block sequence: its own line", ref: zone, field: "spec.records[0].values[1]", want: 13},
		"Record":       {reason: "a sequence item: its first line", ref: zone, field: "spec.records[0]", want: 9},
		"Object":       {reason: "no field: the object's first key, after its comment", ref: zone, want: 2},
		"Missing":      {reason: "a field that is not there: the nearest enclosing one", ref: zone, field: "spec.updateKeyRef", want: 6},
		"SecondDoc":    {reason: "the second document, after a blank line: lines of the file, not of the document", index: 1, ref: rec, field: "spec.values[1]", want: 23},
		"Duplicate":    {reason: "a key set twice: the second, which the duplicate-field error is about", index: 1, ref: rec, field: "spec.ttl", want: 22},
		"OtherObject":  {reason: "the document is not the object (the file changed): no line rather than a wrong one", index: 1, ref: zone, field: "spec", want: 0},
		"NoSuchDoc":    {reason: "an index past the file's documents: no line", index: 5, ref: rec, want: 0},
		"BadIndex":     {reason: "a malformed field path stops at what it could read", ref: zone, field: "spec.records[x]", want: 8},
		"IndexTooHigh": {reason: "an index past a sequence's end: the sequence's field", ref: zone, field: "spec.records[3].name", want: 8},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := LineOf([]byte(twoDocs), tc.index, tc.ref, tc.field); got != tc.want {
				t.Errorf("%s: LineOf(%d, %s, %q) = %d, want %d", tc.reason, tc.index, tc.ref, tc.field, got, tc.want)
			}
		})
	}
}

func TestLocate(t *testing.T) {
	src := func(file string, index int) diag.Source {
		return diag.Source{Ref: diag.ObjectRef{Kind: "BindZone", Name: "example-com"}, File: file, Index: index}
	}
	rs := diag.Results{
		{Severity: diag.Error, Source: src("zones.yaml", 0), Field: "spec.records[0].values[1]", Message: "bad"},
		{Severity: diag.Warning, Source: src("zones.yaml", 0), Field: "spec.records[0]", Message: "odd"},
		{Severity: diag.Info, Source: src("zones.yaml", 0), Message: "serial 1 -> 2"},
		{Severity: diag.Error, Source: src("gone.yaml", 0), Message: "unreadable file"},
	}
	reads := 0
	l := Locator{Read: func(file string) ([]byte, bool) {
		reads++
		return []byte(twoDocs), file == "zones.yaml"
	}}
	l.Locate(rs)
	var got []string
	for _, r := range rs {
		got = append(got, r.String())
	}
	want := []string{
		"error: BindZone/example-com (zones.yaml:13) spec.records[0].values[1]: bad",
		"warning: BindZone/example-com (zones.yaml:9) spec.records[0]: odd",
		"info: BindZone/example-com (zones.yaml): serial 1 -> 2",
		"error: BindZone/example-com (gone.yaml): unreadable file",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors and warnings get file:line, info results and unreadable files keep the file (-want +got):\n%s", diff)
	}
	if reads != 2 {
		t.Errorf("each file is read once: %d reads for 2 files", reads)
	}
}

func TestSyntaxError(t *testing.T) {
	cases := map[string]struct {
		reason string
		data   string
		want   string
	}{
		"Fine":      {reason: "every document parses", data: twoDocs, want: ""},
		"Unclosed":  {reason: "an unclosed flow sequence, in the second document: the line where it opens (yaml.v3 says 3, counting parser errors from 0)", data: "a: 1\n---\nb: 2\nspec: [a\n", want: "f.yaml:4: invalid YAML: did not find expected ',' or ']'"},
		"Tab":       {reason: "a tab indenting a mapping (a scanner error: yaml.v3 counts its lines from 1)", data: "a:\n\tb: 1\n", want: "f.yaml:2: invalid YAML: found character that cannot start any token"},
		"BadIndent": {reason: "a key indented less than its mapping: the line of the key (a parser error, which yaml.v3 counts from 0)", data: "a: 1\nspec:\n  b: 1\n c: 2\n", want: "f.yaml:4: invalid YAML: did not find expected key"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := SyntaxError("f.yaml", []byte(tc.data)); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("%s: got %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

// TestProcessorLines: with Files, both of the processor's paths (the
// cutter, and the SDK's for input the cutter does not take) put the line
// of the field, in the file kpt names, into the result's message, and keep
// kpt's file.path and file.index.
func TestProcessorLines(t *testing.T) {
	const file = `apiVersion: bind.unkin.net/v1alpha1
kind: DNSRecord
metadata:
  name: api
  namespace: dns
spec:
  zoneRef: example-com
  name: api
  type: A
  values:
  - 192.0.2.300
`
	item := func(indent string) string {
		return strings.ReplaceAll(strings.TrimSuffix(`apiVersion: bind.unkin.net/v1alpha1
kind: DNSRecord
metadata:
  name: api
  namespace: dns
  annotations:
    config.kubernetes.io/path: rec.yaml
    internal.config.kubernetes.io/path: rec.yaml
    internal.config.kubernetes.io/package-path: /pkg
spec:
  zoneRef: example-com
  name: api
  type: A
  values: ["192.0.2.300"]
`, "\n"), "\n", "\n"+indent)
	}
	inputs := map[string]string{
		"Cut": "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " + item("  ") + "\n",
		// A flow-style item: the cutter leaves it to the SDK.
		"SDK": "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: bind.unkin.net/v1alpha1, kind: DNSRecord, metadata: {name: api, namespace: dns, annotations: {config.kubernetes.io/path: rec.yaml, internal.config.kubernetes.io/package-path: /pkg}}, spec: {zoneRef: example-com, name: api, type: A, values: [192.0.2.300]}}\n",
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			var asked []string
			p := &Processor{Mode: ValidateMode, Files: func(dir, path string) ([]byte, bool) {
				asked = append(asked, dir+" "+path)
				return []byte(file), dir == "/pkg" && path == "rec.yaml"
			}}
			out, _ := p.Run([]byte(in))
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var got []string
			for _, r := range rl.Results {
				if r.Field != nil && r.Field.Path == "spec.zoneRef" {
					got = append(got, r.Message)
					if r.File == nil || r.File.Path != "rec.yaml" || r.File.Index != 0 {
						t.Errorf("the result keeps kpt's file.path and index: %+v", r.File)
					}
				}
			}
			// Line 7 of the file; in the item (with its annotations) it is line 11.
			want := []string{`cannot resolve BindZone "example-com" in namespace "dns": no such object in the input (rec.yaml:7)`}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the line of the field in the file, not in the item (-want +got):\n%s\nall output:\n%s", diff, out)
			}
			if diff := cmp.Diff([]string{"/pkg rec.yaml"}, asked); diff != "" {
				t.Errorf("the file is read once, under its package directory (-want +got):\n%s", diff)
			}
		})
	}
}
