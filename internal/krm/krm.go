// Package krm adapts the pipeline to the KRM function protocol (kpt and
// kustomize): ResourceList in, ResourceList out.
package krm

import (
	"crypto/rand"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// Annotations the orchestrators use.
const (
	legacyPathAnnotation  = "config.kubernetes.io/path"
	legacyIndexAnnotation = "config.kubernetes.io/index"
)

// Mode selects what the function does with a clean input.
type Mode int

// Modes.
const (
	// RenderMode replaces the previous output with a new render.
	RenderMode Mode = iota
	// ValidateMode only reports results; items are never changed.
	ValidateMode
)

// Processor is the ResourceList processor of fn-render and fn-validate.
type Processor struct {
	Mode Mode
	// Rand is the source of new key material (crypto/rand by default).
	Rand io.Reader
	// stderr are the lines the last Run has for its orchestrator's stderr
	// (Main writes them): kustomize shows a function's stderr, never its
	// results.
	stderr []string
	// Files, when set, reads an item's file (its path annotation under its
	// package-path annotation) so that errors and warnings name their line
	// (PackageFile). Nil: results name the file and document only.
	Files func(dir, path string) ([]byte, bool)
	// PipelineGC, when above 0, is the GC target (debug.SetGCPercent)
	// while the pipeline runs, the previous one restored after. That is
	// when the most is live (the decoded model, every zone built, the
	// validator's work, the kept input documents: ~1.4 GiB at 100,000
	// zones), so the peak heap is PipelineGC % over it, while decoding and
	// writing, which allocate more but hold less, keep the cheaper target.
	PipelineGC int
}

var _ fn.ResourceListProcessor = &Processor{}

// Process implements fn.ResourceListProcessor (the SDK's path, for input
// the cutter in cut.go does not take). It returns false, with results, when
// any result is an error; the items are then left unchanged.
func (p *Processor) Process(rl *fn.ResourceList) (bool, error) {
	var in pipeline.Input
	var rs diag.Results
	roles := make([]role, len(rl.Items))
	dirs := map[string]string{}
	for i, o := range rl.Items {
		h := headerOf(o)
		roles[i] = classify(&in, &rs, &h, func() ([]byte, error) { return decodeJSON([]byte(o.String())) })
		h.addDir(dirs)
	}
	if fc := rl.FunctionConfig; fc != nil {
		h := headerOf(fc)
		addFunctionConfig(&in, &h, func() ([]byte, error) { return decodeJSON([]byte(fc.String())) })
	}
	objs, prs := pipeline.Run(in, render.Options{Rand: p.rand()})
	rs = append(rs, prs...)
	if p.Mode == RenderMode && !rs.HasErrors() {
		// One info result per zone the render changes (kpt shows them).
		rs = append(rs, pipeline.ZoneSummary(in.Previous, objs)...)
		kustomize := rl.FunctionConfig != nil && rl.FunctionConfig.GetAnnotation(kustomizeFunctionAnnotation) != ""
		rs = append(rs, p.freshNotice(kustomize, in.Previous, objs)...)
	}
	p.locate(rs, dirs)
	// Results describe this run only: a ResourceList that carries the
	// results of an earlier run (our own output fed back) must not pile up.
	rl.Results = nil
	for _, res := range rs {
		rl.Results = append(rl.Results, toResult(res))
	}
	if rs.HasErrors() {
		return false, nil
	}
	if p.Mode == ValidateMode {
		return true, nil
	}
	var items fn.KubeObjects
	for i, o := range rl.Items {
		switch roles[i] {
		case previousOutput:
			continue // replaced by this render
		case input:
			if !o.IsLocalConfig() {
				if err := setLocalConfigAnnotation(o); err != nil {
					return false, err
				}
			}
		}
		items = append(items, o)
	}
	for _, o := range objs {
		ko, err := toKubeObject(o)
		if err != nil {
			return false, err
		}
		items = append(items, ko)
	}
	rl.Items = items
	return true, nil
}

// freshNotice is, under kustomize, a warning (on stderr too, once per
// build) when the build had no previous output and made key material or
// started serials at 1: kustomize never feeds a render its output back, so
// every build does it again, silently otherwise.
func (p *Processor) freshNotice(kustomize bool, prev []prior.Object, objs []render.Object) diag.Results {
	p.stderr = nil
	if !kustomize {
		return nil
	}
	secrets, zones := pipeline.Fresh(prev, objs)
	if secrets == 0 && zones == 0 {
		return nil
	}
	msg := fmt.Sprintf("kustomize passes no previous output to bind-fn, so this build made new key material (%d Secrets) and started %d zone serials at 1, "+
		"and the next build will again: applied, every build rotates the keys and sends serials back to 1, which secondaries holding a higher serial ignore. "+
		"Import the keys from your secret store (BindTSIGKey spec.importExisting) and pin the serials (BindZone spec.soa.serial), "+
		"or render with kpt or bind-fn render and build the rendered package (docs/state.md#kustomize)", secrets, zones)
	p.stderr = append(p.stderr, "bind-fn: warning: "+msg)
	return diag.Results{{Severity: diag.Warning, Message: msg}}
}

// locate sets the lines of rs from the items' files, when p can read them;
// dirs is each file's package directory.
func (p *Processor) locate(rs diag.Results, dirs map[string]string) {
	if p.Files == nil || len(rs) == 0 {
		return
	}
	l := Locator{Read: func(file string) ([]byte, bool) {
		dir, ok := dirs[file]
		if !ok {
			return nil, false
		}
		return p.Files(dir, file)
	}}
	l.Locate(rs)
}

func (p *Processor) rand() io.Reader {
	if p.Rand == nil {
		return rand.Reader
	}
	return p.Rand
}

// role is what the function does with an item.
type role int

const (
	// passThrough: not ours; written back as it came.
	passThrough role = iota
	// input: a bind.unkin.net object, read by the model; marked
	// local-config after a render.
	input
	// previousOutput: an object an earlier render made (our managed-by
	// label), replaced by this render; its Secrets' keys are reused.
	previousOutput
)

// classify is the one place that sorts an item, for both paths: a
// bind.unkin.net input goes into in.Items, the previous output into
// in.Previous, anything else passes through. js gives the item's JSON; it
// is called only for inputs, previous Secrets and zones ConfigMaps.
func classify(in *pipeline.Input, rs *diag.Results, h *header, js func() ([]byte, error)) role {
	src := h.source()
	switch {
	case model.IsGroup(h.APIVersion):
		b, err := js()
		if err != nil {
			rs.Errorf(src, fieldOf(err), "cannot read object: %v", err)
			return input
		}
		in.Items = append(in.Items, model.Item{Source: src, JSON: b})
		return input
	case objects.IsOutput(h.APIVersion, h.Kind, h.Metadata.Name, h.Metadata.Labels):
		po := prior.Object{Src: src, Kind: h.Kind, Annotations: h.Metadata.Annotations}
		switch {
		case h.Kind == "Secret":
			b, err := js()
			if err == nil {
				po.Data, err = prior.SecretData(b)
			}
			if err != nil {
				rs.Warnf(src, "data", "cannot read previous Secret (%v): its key material will be regenerated", err)
				return previousOutput
			}
		case h.Kind == "ConfigMap" && h.Metadata.Labels[objects.LabelComponent] == objects.ComponentZones:
			// The zones' state is their files (internal/output).
			b, err := js()
			if err == nil {
				po.Data, err = prior.ConfigMapData(b)
			}
			if err != nil {
				rs.Errorf(src, "data", "cannot read the previous zone files (%v): their serials are the zones' state; restore the object from the previous render", err)
				return previousOutput
			}
		}
		in.Previous = append(in.Previous, po)
		return previousOutput
	}
	return passThrough
}

// addFunctionConfig reads a bind.unkin.net functionConfig as one more input
// (an unreadable one is ignored, as the SDK ignores it).
func addFunctionConfig(in *pipeline.Input, h *header, js func() ([]byte, error)) {
	if !model.IsGroup(h.APIVersion) {
		return
	}
	if b, err := js(); err == nil {
		in.Items = append(in.Items, model.Item{Source: h.source(), JSON: b})
	}
}

// headerOf is the header of an object the SDK parsed.
func headerOf(o *fn.KubeObject) header {
	var h header
	h.APIVersion, h.Kind = o.GetAPIVersion(), o.GetKind()
	h.Metadata.Name, h.Metadata.Namespace = o.GetName(), o.GetNamespace()
	h.Metadata.Labels, h.Metadata.Annotations = o.GetLabels(), o.GetAnnotations()
	return h
}

// sourceOf is where an object came from, by the annotations the
// orchestrator set: kpt's path and index (internal or legacy), else the
// origin kustomize records with `buildMetadata: [originAnnotations]`.
func sourceOf(ref diag.ObjectRef, a map[string]string) diag.Source {
	src := diag.Source{Ref: ref, File: a[fn.PathAnnotation]}
	if src.File == "" {
		src.File = a[legacyPathAnnotation]
	}
	if src.File == "" {
		src.File = originPath(a[originAnnotation])
	}
	idx := a[fn.IndexAnnotation]
	if idx == "" {
		idx = a[legacyIndexAnnotation]
	}
	src.Index, _ = strconv.Atoi(idx)
	return src
}

// originAnnotation is kustomize's record of an object's source file.
const originAnnotation = "config.kubernetes.io/origin"

// originPath reads the `path:` line of a kustomize origin annotation.
func originPath(origin string) string {
	for _, line := range strings.Split(origin, "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "path:"); ok {
			return strings.Trim(strings.TrimSpace(p), `"'`)
		}
	}
	return ""
}

func toResult(r diag.Result) *fn.Result {
	out := &fn.Result{Message: r.Message, Severity: fn.Severity(r.Severity)}
	ref := r.Source.Ref
	if ref.Kind != "" || ref.Name != "" {
		out.ResourceRef = &fn.ResourceRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, Namespace: ref.Namespace}
	}
	if r.Field != "" {
		out.Field = &fn.Field{Path: r.Field}
	}
	if r.Source.File != "" {
		out.File = &fn.File{Path: r.Source.File, Index: r.Source.Index}
		// kpt prints resourceRef, field and message, never file: name the
		// file (and line, when known) in the message so a user finds it.
		out.Message = fmt.Sprintf("%s (%s)", r.Message, r.Source.Location())
	}
	return out
}

func toKubeObject(o render.Object) (*fn.KubeObject, error) {
	js, err := objects.YAML(o.Obj)
	if err != nil {
		return nil, fmt.Errorf("cannot encode rendered object: %w", err)
	}
	ko, err := fn.ParseKubeObject(js)
	if err != nil {
		return nil, fmt.Errorf("cannot encode rendered object: %w", err)
	}
	if o.Path != "" {
		if err := ko.SetAnnotation(fn.PathAnnotation, o.Path); err != nil {
			return nil, err
		}
		if err := ko.SetAnnotation(legacyPathAnnotation, o.Path); err != nil {
			return nil, err
		}
	}
	return ko, nil
}

// setLocalConfigAnnotation marks an input local-config. annotations: null
// (every entry commented out) is no annotations: the SDK cannot set a key
// in a null, so the null goes first.
func setLocalConfigAnnotation(o *fn.KubeObject) error {
	if len(o.GetAnnotations()) == 0 {
		if _, err := o.RemoveNestedField("metadata", "annotations"); err != nil {
			return err
		}
	}
	return o.SetAnnotation(fn.KptLocalConfig, "true")
}
