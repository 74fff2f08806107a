package testutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// ReadItems reads every YAML document of every *.yaml file in dir (not
// recursing, skipping kustomization.yaml and Kptfile) as pipeline items, with
// the file and index recorded the way kpt would.
func ReadItems(t testing.TB, dir string) []model.Item {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var items []model.Item
	for _, f := range files {
		base := filepath.Base(f)
		if base == "kustomization.yaml" || base == "Kptfile" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		its, err := DecodeItems(base, data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		items = append(items, its...)
	}
	return items
}

// DecodeItems splits a multi-document YAML file into items.
func DecodeItems(file string, data []byte) ([]model.Item, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var items []model.Item
	for i := 0; ; i++ {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return items, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if obj == nil {
			continue
		}
		js, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		items = append(items, model.Item{
			Source: diag.Source{
				Ref:   diag.RefOf(obj),
				File:  file,
				Index: i,
			},
			JSON: js,
		})
	}
}

// Shuffle returns the items in a seeded random order.
func Shuffle(items []model.Item, seed uint64) []model.Item {
	out := append([]model.Item(nil), items...)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// DetRand is a deterministic byte source for key material in golden tests.
type DetRand struct{ n byte }

func (d *DetRand) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = d.n
		d.n += 7
	}
	return len(p), nil
}

// Lines is a small helper for messages.
func Lines(s ...string) string { return strings.Join(s, "\n") }

// EditItem returns a copy of items with the object kind/name changed by fn
// through its JSON form; the test fails when there is no such object.
func EditItem(t testing.TB, items []model.Item, kind, name string, fn func(obj map[string]any)) []model.Item {
	t.Helper()
	out := append([]model.Item(nil), items...)
	for i, it := range out {
		if it.Source.Ref.Kind != kind || it.Source.Ref.Name != name {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(it.JSON, &obj); err != nil {
			t.Fatal(err)
		}
		fn(obj)
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		out[i].JSON = b
		return out
	}
	t.Fatalf("no %s %q in the inputs", kind, name)
	return nil
}
