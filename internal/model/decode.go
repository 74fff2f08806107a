// Package model turns the user's bind.unkin.net objects into one resolved
// desired state per BindCluster: every reference followed, every default
// applied, every problem a located diag.Result. It does no I/O and knows
// neither kpt nor Crossplane.
package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
)

// Item is one input object as the adapters hand it over: its identity, where
// it came from, and its JSON.
type Item struct {
	Source diag.Source
	// JSON is the whole object.
	JSON []byte
}

// ItemOf is one object's JSON as the item at index of file, its source
// naming the object by its apiVersion, kind, namespace and name.
func ItemOf(file string, index int, js []byte) (Item, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return Item{}, err
	}
	ref := diag.ObjectRef{APIVersion: head.APIVersion, Kind: head.Kind, Namespace: head.Metadata.Namespace, Name: head.Metadata.Name}
	return Item{Source: diag.Source{Ref: ref, File: file, Index: index}, JSON: js}, nil
}

// Set holds the decoded objects of the group, in input order.
type Set struct {
	Clusters       []Obj[v1alpha1.BindCluster]
	Zones          []Obj[v1alpha1.BindZone]
	Records        []Obj[v1alpha1.DNSRecord]
	Views          []Obj[v1alpha1.BindView]
	Keys           []Obj[v1alpha1.BindTSIGKey]
	ACLs           []Obj[v1alpha1.BindACL]
	Catalogs       []Obj[v1alpha1.BindCatalogZone]
	Policies       []Obj[v1alpha1.BindPolicy]
	DNSSECPolicies []Obj[v1alpha1.BindDNSSECPolicy]
}

// Obj is a decoded object and where it came from.
type Obj[T any] struct {
	Src diag.Source
	Obj *T
}

// IsGroup reports whether apiVersion belongs to bind.unkin.net.
func IsGroup(apiVersion string) bool {
	return strings.HasPrefix(apiVersion, v1alpha1.Group+"/")
}

// Decode decodes every item of the bind.unkin.net group strictly: unknown
// fields, unknown kinds and unknown versions are located errors. Status is
// ignored (a pure function neither reads nor writes it).
func Decode(items []Item) (*Set, diag.Results) {
	var rs diag.Results
	s := &Set{}
	for _, it := range items {
		ref := it.Source.Ref
		if ref.APIVersion != v1alpha1.APIVersion {
			rs.Errorf(it.Source, "apiVersion", "unknown version %q of group %s: only %s is served", ref.APIVersion, v1alpha1.Group, v1alpha1.APIVersion)
			continue
		}
		var err error
		switch ref.Kind {
		case v1alpha1.KindBindCluster:
			err = decodeInto(it, &s.Clusters, &rs)
		case v1alpha1.KindBindZone:
			err = decodeInto(it, &s.Zones, &rs)
		case v1alpha1.KindDNSRecord:
			err = decodeInto(it, &s.Records, &rs)
		case v1alpha1.KindBindView:
			err = decodeInto(it, &s.Views, &rs)
		case v1alpha1.KindBindTSIGKey:
			err = decodeInto(it, &s.Keys, &rs)
		case v1alpha1.KindBindACL:
			err = decodeInto(it, &s.ACLs, &rs)
		case v1alpha1.KindBindCatalogZone:
			err = decodeInto(it, &s.Catalogs, &rs)
		case v1alpha1.KindBindPolicy:
			err = decodeInto(it, &s.Policies, &rs)
		case v1alpha1.KindBindDNSSECPolicy:
			err = decodeInto(it, &s.DNSSECPolicies, &rs)
		default:
			rs.Errorf(it.Source, "kind", "unknown kind %q in %s: expected one of %s", ref.Kind, v1alpha1.APIVersion, strings.Join(v1alpha1.Kinds, ", "))
			continue
		}
		if err != nil {
			rs.Errorf(it.Source, "", "cannot decode object: %v", err)
		}
	}
	return s, rs
}

var strictPath = regexp.MustCompile(`^(unknown|duplicate) field "([^"]*)"$`)

func decodeInto[T any](it Item, into *[]Obj[T], rs *diag.Results) error {
	// Drop status; an object without the word anywhere (most of them)
	// skips the two extra passes over its JSON.
	clean := it.JSON
	if bytes.Contains(it.JSON, []byte(`"status"`)) {
		raw := map[string]json.RawMessage{}
		if err := json.Unmarshal(it.JSON, &raw); err != nil {
			return err
		}
		delete(raw, "status")
		var err error
		if clean, err = json.Marshal(raw); err != nil {
			return err
		}
	}
	obj := new(T)
	strict, err := sigsjson.UnmarshalStrict(clean, obj)
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			rs.Errorf(it.Source, indexedPath(clean, te), "cannot decode: got %s, want %s", te.Value, te.Type)
			return nil
		}
		return err
	}
	// Unknown fields are errors, but the object is still resolved (without
	// them) so that every other problem is reported in the same run.
	for _, e := range strict {
		m := strictPath.FindStringSubmatch(e.Error())
		if m == nil {
			rs.Errorf(it.Source, "", "%v", e)
			continue
		}
		rs.Errorf(it.Source, m[2], "%s field %q: remove it or check its spelling against the %s schema", m[1], lastSegment(m[2]), it.Source.Ref.Kind)
	}
	// The adapters read what they need of an object's annotations (its
	// file and index, it.Source) before decoding, and nothing past here
	// reads an input's annotations: kpt's four path and index annotations
	// per object are ~100 MiB held through validation at 100,000 zones.
	if m, ok := any(obj).(metav1.Object); ok {
		m.SetAnnotations(nil)
	}
	*into = append(*into, Obj[T]{Src: it.Source, Obj: obj})
	return nil
}

func lastSegment(p string) string {
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[i+1:]
	}
	return p
}

// String is a helper for messages.
func (s *Set) String() string {
	return fmt.Sprintf("%d clusters, %d zones, %d records", len(s.Clusters), len(s.Zones), len(s.Records))
}

// Sources lists where every decoded object came from, kind by kind.
func (s *Set) Sources() []diag.Source {
	var out []diag.Source
	out = appendSources(out, s.Clusters)
	out = appendSources(out, s.Zones)
	out = appendSources(out, s.Records)
	out = appendSources(out, s.Views)
	out = appendSources(out, s.Keys)
	out = appendSources(out, s.ACLs)
	out = appendSources(out, s.Catalogs)
	out = appendSources(out, s.Policies)
	return appendSources(out, s.DNSSECPolicies)
}

func appendSources[T any](out []diag.Source, objs []Obj[T]) []diag.Source {
	for _, o := range objs {
		out = append(out, o.Src)
	}
	return out
}

// indexedPath is a type error's field path with list indices
// (spec.records[2].name): encoding/json names the field without them
// (spec.records.name). It walks the object to the first value at that path
// whose JSON kind is the one the error reports; te.Field when none is found.
func indexedPath(doc []byte, te *json.UnmarshalTypeError) string {
	if te.Field == "" {
		return te.Field
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return te.Field
	}
	if p, ok := findTyped(v, strings.Split(te.Field, "."), te.Value, ""); ok {
		return p
	}
	return te.Field
}

func findTyped(v any, segs []string, kind, path string) (string, bool) {
	if arr, ok := v.([]any); ok {
		for i, e := range arr {
			if p, ok := findTyped(e, segs, kind, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
		if len(segs) > 0 || jsonKind(v) != kind {
			return "", false
		}
	}
	if len(segs) == 0 {
		return path, jsonKind(v) == kind || strings.HasPrefix(kind, "number") && jsonKind(v) == "number"
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	child, ok := m[segs[0]]
	if !ok {
		return "", false
	}
	next := segs[0]
	if path != "" {
		next = path + "." + segs[0]
	}
	return findTyped(child, segs[1:], kind, next)
}

// jsonKind names a decoded JSON value as UnmarshalTypeError.Value does.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}
