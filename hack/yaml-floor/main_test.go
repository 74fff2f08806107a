package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/miekg/dns"
	yaml2 "go.yaml.in/yaml/v2"
	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/test/gen"
)

// oneZone is the one-zone package hack/bench.sh measures, at n records.
func oneZone(n int) []byte {
	return gen.Generate(gen.Options{Zones: 1, Records: n, Seed: 1}).ResourceList()
}

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reason  string
		in      []byte
		wantErr string
	}{
		{name: "generated", reason: "the benchmark's own input parses and is written back unchanged", in: oneZone(2000)},
		{name: "broken item", reason: "a floor that parses nothing would measure nothing: a bad item must fail",
			in: []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- a: b\n- c: [\n"), wantErr: "item 1"},
		{name: "not a ResourceList", reason: "the header is parsed too",
			in: []byte("kind: List\nitems:\n- a: b\n"), wantErr: "not a ResourceList"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(bytes.NewReader(tc.in), &out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: err = %v, want %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if !bytes.Equal(out.Bytes(), tc.in) {
				t.Errorf("%s: output differs from input", tc.reason)
			}
		})
	}
}

// BenchmarkParse compares the maintained YAML parsers in the module graph
// on the one zone item of a 100k-record package (BENCHMARKS.md, fourth
// round): nothing decoded, each into its cheapest target.
func BenchmarkParse(b *testing.B) {
	in := oneZone(100000)
	start := bytes.Index(in, []byte("\n- apiVersion: bind.unkin.net/v1alpha1\n  kind: BindZone\n"))
	if start < 0 {
		b.Fatal("no BindZone item")
	}
	item := in[start+1:]
	if end := bytes.Index(item[1:], []byte("\n- ")); end >= 0 {
		item = item[:end+2]
	}
	b.Logf("zone item: %d bytes", len(item))
	for _, p := range []struct {
		name  string
		parse func([]byte) error
	}{
		{"yaml.v2", func(d []byte) error { var v []struct{}; return yaml2.Unmarshal(d, &v) }},
		{"yaml.v3", func(d []byte) error { var v []struct{}; return yaml3.Unmarshal(d, &v) }},
		{"sigs.k8s.io/yaml-to-json", func(d []byte) error { _, err := yaml.YAMLToJSONStrict(d); return err }},
		{"sigs.k8s.io/yaml-to-json+unmarshal", func(d []byte) error {
			js, err := yaml.YAMLToJSONStrict(d)
			if err != nil {
				return err
			}
			var v []any
			return json.Unmarshal(js, &v)
		}},
	} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(item)))
			for b.Loop() {
				if err := p.parse(item); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkZoneParse is the other half of the floor: the same zone, as the
// zone file named-checkzone reads, through miekg/dns's zone parser (the
// library every record of bind-fn goes through), each RR parsed and
// dropped.
func BenchmarkZoneParse(b *testing.B) {
	zones, err := gen.Generate(gen.Options{Zones: 1, Records: 100000, Seed: 1}).ZoneFiles()
	if err != nil || len(zones) != 1 {
		b.Fatalf("zone files: %d, %v", len(zones), err)
	}
	z := zones[0]
	b.ReportAllocs()
	b.SetBytes(int64(len(z.Text)))
	for b.Loop() {
		zp := dns.NewZoneParser(bytes.NewReader(z.Text), z.Origin+".", "")
		n := 0
		for _, ok := zp.Next(); ok; _, ok = zp.Next() {
			n++
		}
		if err := zp.Err(); err != nil || n < 100000 {
			b.Fatalf("%d RRs, %v", n, err)
		}
	}
}
