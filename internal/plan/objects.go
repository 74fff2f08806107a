package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/krm"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// Object is one rendered object as the plan reads it: what identifies it,
// its data (ConfigMap data, or a Secret's decoded data) and, for the
// StatefulSet, its pod template apart from the rest of its spec.
type Object struct {
	Kind, Namespace, Name string
	Labels                map[string]string
	Annotations           map[string]string
	Data                  map[string][]byte
	// Template is the canonical JSON of a StatefulSet's spec.template:
	// when it changes, the pods roll.
	Template []byte
	// Spec is the canonical JSON of everything else the object carries
	// (a StatefulSet's spec without its template, a Service's spec, ...).
	Spec []byte
}

// Cluster is the BindCluster the object belongs to.
func (o *Object) Cluster() string { return o.Labels[objects.LabelInstance] }

// Component is the object's app.kubernetes.io/component.
func (o *Object) Component() string { return o.Labels[objects.LabelComponent] }

// FromRender converts the output of a render.
func FromRender(objs []render.Object) ([]Object, error) {
	out := make([]Object, 0, len(objs))
	for _, ro := range objs {
		o, err := fromTyped(ro.Obj)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func fromTyped(obj any) (Object, error) {
	switch v := obj.(type) {
	case *corev1.ConfigMap:
		o := Object{Kind: "ConfigMap", Namespace: v.Namespace, Name: v.Name, Labels: v.Labels, Annotations: v.Annotations, Data: map[string][]byte{}}
		for k, s := range v.Data {
			o.Data[k] = []byte(s)
		}
		for k, b := range v.BinaryData {
			o.Data[k] = b
		}
		return o, nil
	case *corev1.Secret:
		o := Object{Kind: "Secret", Namespace: v.Namespace, Name: v.Name, Labels: v.Labels, Annotations: v.Annotations, Data: map[string][]byte{}}
		for k, b := range v.Data {
			o.Data[k] = b
		}
		for k, s := range v.StringData {
			o.Data[k] = []byte(s)
		}
		return o, nil
	case *appsv1.StatefulSet:
		o := Object{Kind: "StatefulSet", Namespace: v.Namespace, Name: v.Name, Labels: v.Labels, Annotations: v.Annotations}
		var err error
		if o.Template, err = canonical(v.Spec.Template); err != nil {
			return Object{}, err
		}
		spec := v.Spec
		spec.Template = corev1.PodTemplateSpec{}
		o.Spec, err = canonical(spec)
		return o, err
	}
	m, err := objects.ToMap(obj)
	if err != nil {
		return Object{}, err
	}
	meta, _ := m["metadata"].(map[string]any)
	o := Object{Kind: str(m, "kind"), Namespace: str(meta, "namespace"), Name: str(meta, "name"), Labels: strMap(meta["labels"]), Annotations: strMap(meta["annotations"])}
	o.Spec, err = canonical(m["spec"])
	return o, err
}

// canonical is JSON with sorted keys (encoding/json sorts map keys; typed
// structs have a fixed field order).
func canonical(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cannot encode %T: %w", v, err)
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func strMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}

// Package is what a directory or git tree holds: the bind.unkin.net inputs
// and the objects a previous render left there.
type Package struct {
	Items    []model.Item
	Rendered []Object
	// RenderedOnly skips the inputs while reading files (a plan that
	// compares two renders needs none of them; in a large package they
	// are most of the YAML).
	RenderedOnly bool
}

// AddFile reads every YAML document of a file into the package: inputs by
// their API group, rendered objects by the managed-by label; anything else
// is not the plan's business and is skipped.
func (p *Package) AddFile(name string, data []byte) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fileError(name, data, i, err)
		}
		if p.RenderedOnly && isInput(doc) {
			continue
		}
		var js []byte
		if isInput(doc) {
			// An input is read as fn-render reads it (strict: a key set
			// twice is an error), so plan refuses what the render refuses.
			if js, err = krm.DecodeJSON(doc); err != nil {
				if serr := krm.SyntaxError(name, data); serr != nil {
					return serr
				}
				return inputError(name, data, i, doc, err)
			}
		} else if js, err = yaml.YAMLToJSON(doc); err != nil {
			return fileError(name, data, i, err)
		}
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			return fileError(name, data, i, err)
		}
		if m == nil {
			continue
		}
		meta, _ := m["metadata"].(map[string]any)
		if model.IsGroup(str(m, "apiVersion")) {
			p.Items = append(p.Items, model.Item{Source: diag.Source{Ref: diag.RefOf(m), File: name, Index: i}, JSON: js})
			continue
		}
		if strMap(meta["labels"])[objects.LabelManagedBy] != objects.ManagedBy {
			continue
		}
		o, err := decodeRendered(str(m, "kind"), js)
		if err != nil {
			return fileError(name, data, i, err)
		}
		p.Rendered = append(p.Rendered, o)
	}
}

// fileError is a file plan cannot read: a YAML syntax error at the line
// bind-fn render names for it (krm.SyntaxError), else the error in the
// file's document i (from 1 for a user).
func fileError(name string, data []byte, i int, err error) error {
	if serr := krm.SyntaxError(name, data); serr != nil {
		return serr
	}
	return fmt.Errorf("%s, document %d: %w", name, i+1, err)
}

// inputError is fn-render's error for an input it cannot read, located
// by file:line, object and field.
func inputError(name string, data []byte, i int, doc []byte, err error) error {
	var m map[string]any
	_ = yaml.Unmarshal(doc, &m) // last value wins: only the header is read
	ref := diag.RefOf(m)
	field := krm.FieldOf(err)
	src := diag.Source{Ref: ref, File: name, Index: i, Line: krm.LineOf(data, i, ref, field)}
	where := fmt.Sprintf("%s: %s", src.Location(), ref)
	if field != "" {
		where += " " + field
	}
	return fmt.Errorf("%s: cannot read object: %w", where, err)
}

// isInput says whether a YAML document is a bind.unkin.net object, by its
// top-level apiVersion line (only to skip it: a document this misses is
// decoded and sorted properly).
func isInput(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("apiVersion:")); ok {
			return model.IsGroup(strings.Trim(strings.TrimSpace(string(v)), `"'`))
		}
	}
	return false
}

// addFiles reads files in parallel, keeping their order.
func (p *Package) addFiles(names []string, read func(i int) ([]byte, error)) error {
	parts := make([]Package, len(names))
	errs := make([]error, len(names))
	parallel(len(names), func(i int) {
		data, err := read(i)
		if err != nil {
			errs[i] = err
			return
		}
		parts[i].RenderedOnly = p.RenderedOnly
		errs[i] = parts[i].AddFile(names[i], data)
	})
	for i := range parts {
		if errs[i] != nil {
			return errs[i]
		}
		p.Items = append(p.Items, parts[i].Items...)
		p.Rendered = append(p.Rendered, parts[i].Rendered...)
	}
	return nil
}

func decodeRendered(kind string, js []byte) (Object, error) {
	var obj any
	switch kind {
	case "ConfigMap":
		obj = &corev1.ConfigMap{}
	case "Secret":
		obj = &corev1.Secret{}
	case "StatefulSet":
		obj = &appsv1.StatefulSet{}
	default:
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			return Object{}, err
		}
		return fromTyped(m)
	}
	if err := json.Unmarshal(js, obj); err != nil {
		return Object{}, fmt.Errorf("cannot read %s: %w", kind, err)
	}
	return fromTyped(obj)
}

// Previous is the package's rendered objects as the pipeline's previous
// output: serials and key material carry over as kpt would carry them.
func (p *Package) Previous() []prior.Object {
	var out []prior.Object
	for _, o := range p.Rendered {
		if o.Kind != "Secret" && o.Kind != "ConfigMap" {
			continue
		}
		po := prior.Object{Kind: o.Kind, Annotations: o.Annotations, Data: o.Data}
		po.Src.Ref = diag.ObjectRef{APIVersion: "v1", Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
		out = append(out, po)
	}
	return out
}
