package krm

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/gen"
)

// checkYAMLToJSON holds the fast path to yaml.YAMLToJSON: where it decodes
// a document at all, it must give the same bytes (and it must not accept
// what yaml.v2 refuses).
func checkYAMLToJSON(t *testing.T, name string, doc []byte) (fast bool) {
	t.Helper()
	got, ok := fastYAMLToJSON(doc)
	if !ok {
		return false
	}
	want, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Errorf("%s: the fast path decoded a document yaml.v2 refuses (%v):\n%s", name, err, doc)
		return true
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s: fast path differs from yaml.YAMLToJSON (-want +got):\n%s\ndocument:\n%s", name, diff, doc)
	}
	return true
}

func TestYAMLToJSONMatches(t *testing.T) {
	cases := map[string]struct {
		reason string
		doc    string
		fast   bool
	}{
		"block": {
			reason: "the shapes packages are made of take the fast path",
			doc:    "apiVersion: bind.unkin.net/v1alpha1\nkind: BindZone\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/index: '0'\n    x: \"it''s \\\"q\\\" \\\\ <&>\" # c\nspec:\n  ttl: 900\n  neg: -5\n  zero: 0\n  empty:\n  list: []\n  map: {}\n  records:\n    - name: www\n      type: A\n      values:\n        - \"192.0.2.1\"\n        - '192.0.2.2'\n    -\n      name: b\n  indentless:\n  - a b  c\n  - x#y\n  -\n  - last\n",
			fast:   true,
		},
		"bools":      {reason: "YAML 1.1 bools and nulls go to yaml.v2", doc: "a: yes\n"},
		"bool key":   {reason: "a key that reads as a bool", doc: "on: a\n"},
		"null":       {reason: "null words", doc: "a: Null\n"},
		"float":      {reason: "floats", doc: "a: 1.5\n"},
		"octal":      {reason: "leading zero", doc: "a: 0755\n"},
		"ip":         {reason: "unquoted address (a string, but not by the fast path)", doc: "a: 192.0.2.1\n"},
		"timestamp":  {reason: "timestamps", doc: "a: 2001-12-14\n"},
		"escape":     {reason: "escapes other than \\\" and \\\\", doc: "a: \"x\\ty\"\n"},
		"multi":      {reason: "a plain scalar over two lines", doc: "a: b\n  c\n"},
		"multi item": {reason: "a sequence entry over two lines", doc: "a:\n- b\n  c\n"},
		"folded":     {reason: "block scalars", doc: "a: |\n  x\n"},
		"anchor":     {reason: "anchors", doc: "a: &x b\nc: *x\n"},
		"tag":        {reason: "tags", doc: "a: !!str 1\n"},
		"flow":       {reason: "flow sequences of scalars", doc: "a: [\"10.0.0.0/16\", '2001:db8::/48', any, 1, x y ]  # c\nb: [ \"a\\\"b\" ]\n", fast: true},
		"flow float": {reason: "a float in a flow sequence", doc: "a: [1.5]\n"},
		"flow map":   {reason: "flow mappings", doc: "a:\n  - {name: \"host-0\", type: A, ttl: 900, values: [\"198.18.58.185\", x], e: {}, m: {a: [b]}}\n", fast: true},
		"flow key":   {reason: "a quoted key in a flow mapping", doc: "a: {\"b\": c}\n"},
		"flow nokey": {reason: "a flow mapping entry without a key", doc: "a: {b}\n"},
		"flow dup":   {reason: "a duplicate key in a flow mapping", doc: "a: {b: 1, b: 2}\n"},
		"flow bool":  {reason: "a bool in a flow mapping", doc: "a: {b: on}\n"},
		"flow nest":  {reason: "nested flow sequences", doc: "a: [[b], []]\n", fast: true},
		"flow comma": {reason: "a trailing comma", doc: "a: [b, ]\n"},
		"flow empty": {reason: "an empty entry", doc: "a: [b, , c]\n"},
		"flow open":  {reason: "a flow sequence over two lines", doc: "a: [b,\n  c]\n"},
		"flow colon": {reason: "a plain entry with a colon", doc: "a: [b: c]\n"},
		"dup":        {reason: "duplicate keys", doc: "a: 1\na: 2\n"},
		"tab":        {reason: "tabs", doc: "a:\tb\n"},
		"utf8":       {reason: "non-ASCII", doc: "a: é\n"},
		"colon":      {reason: "': ' in a plain scalar", doc: "a: b: c\n"},
		"quoted key": {reason: "quoted keys", doc: "\"a\": b\n"},
		"doc marker": {reason: "document markers", doc: "---\na: b\n"},
		"bad indent": {reason: "a key indented less than its siblings", doc: "a:\n    b: 1\n  c: 2\n"},
		"big int":    {reason: "integers past 18 digits", doc: "a: 1234567890123456789\n"},
		"quote hash": {reason: "a comment glued to a quoted string", doc: "a: \"b\"#c\n"},
		"quote tail": {reason: "text after a quoted string", doc: "a: \"b\" c\n"},
		"open quote": {reason: "a quoted string over two lines", doc: "a: \"b\n  c\"\n"},
		"nested seq": {reason: "a sequence in a sequence entry", doc: "a:\n- - b\n"},
		"digit name": {reason: "a name that starts with a digit but has a letter no number has", doc: "a: 0-0-10-in-addr-arpa-r0\nb: -y\n", fast: true},
		"hex":        {reason: "hex digits only: yaml.v2 could read it as a number", doc: "a: 0xbeef\n"},
		"date time":  {reason: "a timestamp's letters only", doc: "a: 2001-12-14t21:59:43.10Z\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if fast := checkYAMLToJSON(t, name, []byte(tc.doc)); fast != tc.fast {
				t.Errorf("%s: fast path taken = %v, want %v", tc.reason, fast, tc.fast)
			}
		})
	}
}

// TestYAMLToJSONCorpus runs every YAML document of the repository and a
// generated package through both decoders.
func TestYAMLToJSONCorpus(t *testing.T) {
	var docs [][]byte
	_ = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			docs = append(docs, doc)
		}
		return nil
	})
	rl := gen.Generate(gen.BenchOptions(2000)).ResourceList()
	l, ok := cutResourceList(rl)
	if !ok {
		t.Fatal("cannot cut the generated ResourceList")
	}
	fast := 0
	for _, d := range l.items {
		if checkYAMLToJSON(t, "generated", d) {
			fast++
		}
	}
	// A generated package is what packages are made of: all of it should
	// take the fast path.
	if fast != len(l.items) {
		t.Errorf("the fast path took %d of %d generated items, want all", fast, len(l.items))
	}
	for i, d := range docs {
		checkYAMLToJSON(t, "document", d)
		// Every line boundary and prefix must hold too: cut documents
		// short are the hostile shapes the fast path must refuse or match.
		if i%7 == 0 {
			for j := 0; j < len(d); j += 1 + len(d)/50 {
				checkYAMLToJSON(t, "prefix", d[:j])
			}
		}
	}
}

func FuzzYAMLToJSON(f *testing.F) {
	f.Add([]byte("a: b\nc:\n- d: 1\n  e: \"x\\\"y\"\n"))
	f.Add([]byte("a:\n  - '1'\n  -\n  - b # c\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkYAMLToJSON(t, "fuzz", doc)
	})
}
