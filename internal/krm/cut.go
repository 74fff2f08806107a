package krm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	yaml2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// The cutter. The SDK (fn.Run) parses the whole ResourceList into one
// yaml.v3 node tree and re-encodes every item on the way out. For a package
// of 200k records that tree alone is ~1.7 GB live (3 GB peak RSS) and most
// of the run time (BENCHMARKS.md). Run instead cuts the ResourceList text
// into its items, decodes each item on its own straight to JSON (which the
// model needs anyway) and writes the items it does not change back as the
// bytes it read. Only what Process changes is touched: the previous output
// is dropped, bind.unkin.net inputs get the local-config annotation,
// rendered objects are added. Input it cannot cut with certainty (JSON,
// flow-style items, results from earlier functions, unknown top-level
// fields) or an item it cannot decode goes through fn.Run and Process
// unchanged. Both paths sort items with the same classify (krm.go);
// TestCutMatchesSDK holds them to the same meaning.

// Main is fn.AsMain for p: stdin to stdout through Run, a failure logged
// the way the SDK logs it. The output is written as it is encoded (Write),
// never held whole.
func Main(p *Processor) error {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		err = fmt.Errorf("unable to read from stdin: %v", err)
		fn.Logf("failed to evaluate function: %v", err)
		return err
	}
	w := &stickyWriter{w: bufio.NewWriterSize(os.Stdout, 256<<10)}
	f, err := p.Write(w, in)
	if werr := w.flush(); werr != nil {
		return werr
	}
	if err != nil {
		f.log(err)
	}
	for _, l := range p.stderr {
		fmt.Fprintln(os.Stderr, l)
	}
	return err
}

// stickyWriter keeps the first write error and drops every write after it
// (Write checks it once, at the end).
type stickyWriter struct {
	w   *bufio.Writer
	err error
}

func (s *stickyWriter) Write(b []byte) (int, error) {
	if s.err != nil {
		return len(b), nil
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = err
	}
	return len(b), nil
}

func (s *stickyWriter) WriteString(str string) (int, error) {
	if s.err != nil {
		return len(str), nil
	}
	if _, err := s.w.WriteString(str); err != nil {
		s.err = err
	}
	return len(str), nil
}

func (s *stickyWriter) flush() error {
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
}

// kustomizeFunctionAnnotation marks a kustomize transformer's config.
const kustomizeFunctionAnnotation = "config.kubernetes.io/function"

// Failure is what Main logs of a failed run: its results and whether
// kustomize ran it.
type Failure struct {
	Results   fn.Results
	Kustomize bool
}

// failureOf reads a failure from a ResourceList the SDK wrote.
func failureOf(out []byte) Failure {
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		return Failure{}
	}
	return Failure{Results: rl.Results, Kustomize: rl.FunctionConfig != nil && rl.FunctionConfig.GetAnnotation(kustomizeFunctionAnnotation) != ""}
}

// log writes the failure to stderr, and under kustomize its error results
// too: kustomize shows a failing function's stderr but not the results in
// its output, so its users would see only "exit status 1". kpt prints the
// results itself; it gets them once. kustomize is told apart by the
// function config it passes, which carries the function annotation.
func (f Failure) log(err error) {
	if !f.Kustomize {
		fn.Logf("failed to evaluate function: %v", err)
		return
	}
	fn.Logf("failed to evaluate function: %v\n", err)
	for _, r := range f.Results {
		if r.Severity == fn.Error {
			fn.Logf("%s\n", r.String())
		}
	}
}

// Run evaluates the function on a ResourceList, like fn.Run(p.Process, in).
func (p *Processor) Run(in []byte) ([]byte, error) {
	var b bytes.Buffer
	_, err := p.Write(&b, in)
	if err != nil && b.Len() == 0 {
		return nil, err
	}
	return b.Bytes(), err
}

// outWriter is where Write writes the output ResourceList.
type outWriter interface {
	io.Writer
	io.StringWriter
}

// Write evaluates the function on a ResourceList and writes the output
// ResourceList to w as it encodes it: the rendered objects are encoded one
// at a time, in output order, each dropped once written, so the output is
// never held whole (at 100,000 zones it is 370 MiB). Every step that can
// fail on the input runs before the first byte is written; an error after
// that is w's, or an object of our own that does not encode (a bug).
func (p *Processor) Write(w outWriter, in []byte) (Failure, error) {
	rl, ok := cutResourceList(in)
	if !ok {
		return p.writeSDK(w, in)
	}
	items, err := decodeItems(rl.items)
	if err != nil {
		return p.writeSDK(w, in)
	}
	in, rl.items = nil, nil // every item is its own copy now
	var pin pipeline.Input
	var rs diag.Results
	dirs := map[string]string{}
	for _, it := range items {
		it.hdr.addDir(dirs)
		it.role = classify(&pin, &rs, &it.hdr, func() ([]byte, error) { return it.json, nil })
		it.json = nil // pin.Items holds the inputs' JSON until they are decoded
		it.keep()
	}
	kustomize := false
	if rl.fc != nil {
		if fc, err := decodeItem(rl.fc); err == nil {
			addFunctionConfig(&pin, &fc.hdr, func() ([]byte, error) { return fc.json, nil })
			kustomize = fc.hdr.Metadata.Annotations[kustomizeFunctionAnnotation] != ""
		}
	}

	// pipeline.Run drops the items' JSON once decoded: nothing here may
	// hold it (pin keeps only the previous output).
	prev := pin.Previous
	restoreGC := func() {}
	if p.PipelineGC > 0 {
		gc := debug.SetGCPercent(p.PipelineGC)
		restoreGC = func() { debug.SetGCPercent(gc) }
	}
	objs, prs := pipeline.Run(takeInput(&pin), render.Options{Rand: p.rand()})
	restoreGC()
	rs = append(rs, prs...)
	if p.Mode == RenderMode && !rs.HasErrors() {
		// One info result per zone the render changes (kpt shows them).
		rs = append(rs, pipeline.ZoneSummary(prev, objs)...)
		rs = append(rs, p.freshNotice(kustomize, prev, objs)...)
	}
	prev = nil
	p.locate(rs, dirs)
	var results fn.Results
	for _, res := range rs {
		results = append(results, toResult(res))
	}
	failed := rs.HasErrors()
	rendering := !failed && p.Mode == RenderMode

	var out []outItem
	for _, it := range items {
		if it.role == previousOutput && rendering {
			continue // replaced by this render
		}
		doc := it.doc
		if it.role == input && rendering && !it.localConfig {
			d, err := setLocalConfig(doc, it.hasLocalConfig)
			if err != nil {
				return Failure{}, err
			}
			doc = d
		}
		out = append(out, outItem{id: it.id, doc: doc})
	}
	items = nil
	if rendering {
		for _, o := range objs {
			id, err := renderedID(o)
			if err != nil {
				return Failure{}, err
			}
			out = append(out, outItem{id: id, obj: o})
		}
	}
	objs = nil
	// The SDK's order: apiVersion, kind, namespace, name.
	sort.SliceStable(out, func(i, j int) bool { return out[i].id < out[j].id })

	f := Failure{Results: results, Kustomize: kustomize}
	if err := writeResourceList(w, out, rl.fc, results); err != nil {
		return f, err
	}
	if failed {
		return f, fmt.Errorf("error: function failure")
	}
	return f, nil
}

// takeInput moves in out of *pin, leaving pin without items.
func takeInput(pin *pipeline.Input) pipeline.Input {
	in := *pin
	*pin = pipeline.Input{}
	return in
}

// writeSDK is the SDK's path (fn.Run with Process), for input the cutter
// does not take.
func (p *Processor) writeSDK(w outWriter, in []byte) (Failure, error) {
	out, err := fn.Run(fn.ResourceListProcessorFunc(p.Process), in)
	if _, werr := w.Write(out); werr != nil {
		return Failure{}, werr
	}
	if err != nil {
		return failureOf(out), err
	}
	return Failure{}, nil
}

// renderedID is the output id of a rendered object (idString), from its
// type and object metadata, without encoding it; renderedItem checks it
// against the encoded object.
func renderedID(o render.Object) (string, error) {
	ro, ok := o.Obj.(k8sruntime.Object)
	if !ok {
		return "", fmt.Errorf("cannot encode rendered object %T: it is not a Kubernetes object", o.Obj)
	}
	acc, err := meta.Accessor(o.Obj)
	if err != nil {
		return "", fmt.Errorf("cannot encode rendered object %T: %w", o.Obj, err)
	}
	apiVersion, kind := ro.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
	return idString(apiVersion, kind, acc.GetNamespace(), acc.GetName()), nil
}

// renderedItem is a rendered object as an output item: toKubeObject's
// result, written straight from the object's map (one encoding instead of
// encode, parse and encode again).
func renderedItem(o render.Object) (outItem, error) {
	m, err := renderedMap(o)
	if err != nil {
		return outItem{}, err
	}
	// sigs.k8s.io/yaml.Marshal(m) would write m as JSON, parse that JSON
	// with yaml.v2 and write the result; yaml.v2 writes m itself to the same
	// bytes once its numbers are the ints and floats that parse would give
	// (TestRenderedItemMatchesMarshal), without reading every zone file back
	// from a JSON string.
	y, err := yaml2.Marshal(plainNumbers(m))
	if err != nil {
		return outItem{}, fmt.Errorf("cannot encode rendered object: %w", err)
	}
	ref := diag.RefOf(m)
	return outItem{id: idString(ref.APIVersion, ref.Kind, ref.Namespace, ref.Name), doc: y}, nil
}

// renderedMap is the map of a rendered object as it goes out: the object's
// fields with the path annotations set.
func renderedMap(o render.Object) (map[string]any, error) {
	m, err := objects.ToMap(o.Obj)
	if err != nil {
		return nil, fmt.Errorf("cannot encode rendered object: %w", err)
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		return nil, fmt.Errorf("cannot encode rendered object %T: it has no metadata", o.Obj)
	}
	if o.Path != "" {
		ann, _ := meta["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			meta["annotations"] = ann
		}
		ann[fn.PathAnnotation] = o.Path
		ann[legacyPathAnnotation] = o.Path
	}
	return m, nil
}

// plainNumbers replaces, in place, every json.Number in v (ToMap decodes
// numbers so) with the int64 or float64 yaml.v2 reads from its text.
func plainNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = plainNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = plainNumbers(e)
		}
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		if f, err := v.Float64(); err == nil {
			return f
		}
		return v.String()
	}
	return v
}

// outItem is one item of the output: an item of the input as its text
// (doc), or a rendered object (obj), encoded only when it is written.
type outItem struct {
	id  string
	doc []byte
	obj render.Object
}

func idString(apiVersion, kind, ns, name string) string {
	return apiVersion + " " + kind + " " + ns + " " + name
}

// decodeItems decodes every item, spread over GOMAXPROCS goroutines (each
// item is independent; the order is kept). Each goroutine takes the next
// item not yet taken, so one large zone does not hold up the small items
// behind it.
func decodeItems(docs [][]byte) ([]*item, error) {
	items := make([]*item, len(docs))
	errs := make([]error, len(docs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(docs)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(docs); i = int(next.Add(1) - 1) {
				items[i], errs[i] = decodeItem(docs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return items, nil
}

// isLocalConfig is fn.KubeObject.IsLocalConfig on the annotations.
func isLocalConfig(a map[string]string) bool {
	v := a[fn.KptLocalConfig]
	return v != "" && v != "false"
}

// setLocalConfig adds config.kubernetes.io/local-config: "true" to an item.
// Where the annotation is absent and metadata is a plain block mapping, it
// inserts one line into the text; otherwise it goes through the SDK.
func setLocalConfig(doc []byte, has bool) ([]byte, error) {
	if !has {
		if d, ok := insertLocalConfig(doc); ok {
			return d, nil
		}
	}
	ko, err := fn.ParseKubeObject(doc)
	if err != nil {
		return nil, err
	}
	if err := setLocalConfigAnnotation(ko); err != nil {
		return nil, err
	}
	return []byte(ko.String()), nil
}

// insertLocalConfig inserts the annotation under a top-level `metadata:`
// block (creating `annotations:` when missing). ok is false for any shape
// it does not know for certain.
func insertLocalConfig(doc []byte) ([]byte, bool) {
	lines := bytes.SplitAfter(doc, []byte("\n"))
	mi := -1
	for i, l := range lines {
		if bytes.Equal(bytes.TrimRight(l, " \r\n"), []byte("metadata:")) {
			mi = i
			break
		}
	}
	if mi < 0 {
		return nil, false
	}
	// The metadata block: following lines indented more than column 0.
	childIndent := -1
	ai := -1
	end := len(lines)
	for i := mi + 1; i < len(lines); i++ {
		l := lines[i]
		t := bytes.TrimLeft(l, " ")
		if len(bytes.TrimSpace(t)) == 0 || t[0] == '#' {
			continue
		}
		ind := len(l) - len(t)
		if ind == 0 {
			end = i
			break
		}
		if childIndent < 0 {
			childIndent = ind
		}
		if ind == childIndent && (bytes.HasPrefix(t, []byte(`"annotations"`)) || bytes.HasPrefix(t, []byte(`'annotations'`))) {
			return nil, false // a quoted key: leave it to the SDK, or it gets a second block
		}
		if ind == childIndent && bytes.HasPrefix(t, []byte("annotations:")) {
			if !bytes.Equal(bytes.TrimRight(t, " \r\n"), []byte("annotations:")) {
				return nil, false // flow style or a comment: leave it to the SDK
			}
			ai = i
		}
	}
	if childIndent < 0 {
		return nil, false
	}
	var line []byte
	at := mi + 1
	if ai >= 0 {
		// The annotations' own indent, from their first entry.
		annIndent := -1
		for i := ai + 1; i < end; i++ {
			t := bytes.TrimLeft(lines[i], " ")
			if len(bytes.TrimSpace(t)) == 0 || t[0] == '#' {
				continue
			}
			annIndent = len(lines[i]) - len(t)
			break
		}
		if annIndent <= childIndent {
			return nil, false
		}
		line = fmt.Appendf(nil, "%s%s: \"true\"\n", strings.Repeat(" ", annIndent), fn.KptLocalConfig)
		at = ai + 1
	} else {
		line = fmt.Appendf(nil, "%sannotations:\n%s%s: \"true\"\n", strings.Repeat(" ", childIndent), strings.Repeat(" ", childIndent+2), fn.KptLocalConfig)
	}
	var b bytes.Buffer
	b.Grow(len(doc) + len(line))
	for i, l := range lines {
		if i == at {
			b.Write(line)
		}
		b.Write(l)
	}
	if at == len(lines) {
		b.Write(line)
	}
	return b.Bytes(), true
}

// cutList is a ResourceList cut into standalone documents.
type cutList struct {
	items [][]byte
	fc    []byte // functionConfig, nil when absent
}

// cutResourceList cuts the text of a block-style ResourceList into its
// items and functionConfig. ok is false for anything else.
func cutResourceList(in []byte) (cutList, bool) {
	var rl cutList
	lines := bytes.SplitAfter(in, []byte("\n"))
	kind := false
	section := ""
	var body [][]byte // lines of the current section (after its key)
	flush := func() bool {
		switch section {
		case "items":
			items, ok := cutItems(body)
			if !ok {
				return false
			}
			rl.items = items
		case "functionConfig":
			doc, ok := dedent(body, -1)
			if !ok {
				return false
			}
			rl.fc = doc
		}
		body = nil
		return true
	}
	for i, l := range lines {
		t := bytes.TrimRight(l, " \r\n")
		if len(t) == 0 || t[0] == ' ' || t[0] == '#' || t[0] == '-' {
			if i == 0 && bytes.Equal(t, []byte("---")) {
				continue
			}
			if section == "" && len(t) > 0 && t[0] != '#' {
				return rl, false
			}
			body = append(body, l)
			continue
		}
		// A top-level key.
		if !flush() {
			return rl, false
		}
		k, v, found := bytes.Cut(t, []byte(":"))
		if !found {
			return rl, false
		}
		v = bytes.TrimSpace(v)
		switch string(k) {
		case "apiVersion":
			section = "apiVersion"
		case "kind":
			if string(v) != "ResourceList" {
				return rl, false
			}
			kind = true
			section = "kind"
		case "items":
			if len(v) == 2 && string(v) == "[]" {
				section = "none"
				continue
			}
			if len(v) != 0 {
				return rl, false
			}
			section = "items"
		case "functionConfig":
			if len(v) != 0 {
				return rl, false
			}
			section = "functionConfig"
		default:
			return rl, false // results, or something unknown: the SDK knows
		}
	}
	if !flush() || !kind {
		return rl, false
	}
	return rl, true
}

// cutItems cuts a block sequence into its entries, each dedented into a
// standalone document.
func cutItems(body [][]byte) ([][]byte, bool) {
	seq := -1
	var items [][]byte
	var cur [][]byte
	end := func() bool {
		if cur == nil {
			return true
		}
		doc, ok := dedentItem(cur, seq)
		if !ok {
			return false
		}
		items = append(items, doc)
		cur = nil
		return true
	}
	for _, l := range body {
		t := bytes.TrimLeft(l, " ")
		blank := len(bytes.TrimSpace(t)) == 0
		if blank || t[0] == '#' {
			if cur != nil {
				cur = append(cur, l)
			}
			continue
		}
		ind := len(l) - len(t)
		if seq < 0 {
			seq = ind
		}
		if ind == seq {
			if t[0] != '-' || (len(t) > 1 && t[1] != ' ' && t[1] != '\n' && t[1] != '\r') {
				return nil, false
			}
			if !end() {
				return nil, false
			}
		} else if ind < seq || cur == nil {
			return nil, false
		}
		cur = append(cur, l)
	}
	if !end() {
		return nil, false
	}
	return items, true
}

// dedentItem turns the lines of one sequence entry ("- a: 1\n  b: 2") into
// a document ("a: 1\nb: 2").
func dedentItem(lines [][]byte, seq int) ([]byte, bool) {
	first := lines[0][seq+1:] // after the dash
	rest := bytes.TrimLeft(first, " ")
	col := seq + 1 + len(first) - len(rest)
	if len(bytes.TrimSpace(rest)) == 0 {
		// "-" alone: the content starts on the next line.
		return dedent(lines[1:], -1)
	}
	if rest[0] == '#' || rest[0] == '-' || rest[0] == '|' || rest[0] == '>' {
		return nil, false
	}
	out := make([][]byte, 0, len(lines))
	out = append(out, append(bytes.Repeat([]byte(" "), col), rest...))
	out = append(out, lines[1:]...)
	return dedent(out, col)
}

// dedent removes col columns from every line (col < 0: the first content
// line's indent). A content line indented less is refused; comment lines
// indented less are kept as they are.
func dedent(lines [][]byte, col int) ([]byte, bool) {
	// The document is kept until it is written back: room for it once,
	// not a doubling buffer's slack.
	n := 1
	for _, l := range lines {
		n += len(l)
	}
	var b bytes.Buffer
	b.Grow(n)
	for _, l := range lines {
		t := bytes.TrimLeft(l, " ")
		ind := len(l) - len(t)
		blank := len(bytes.TrimSpace(t)) == 0
		if !blank && t[0] != '#' && col < 0 {
			col = ind
		}
		switch {
		case blank && (col < 0 || ind < col || ind >= len(l)):
			b.WriteByte('\n')
		case blank:
			b.Write(l[col:]) // spaces past the indent may be block scalar content
		case ind >= col && col >= 0:
			b.Write(l[col:])
		case t[0] == '#':
			b.Write(t)
		default:
			return nil, false
		}
	}
	if col < 0 {
		return nil, false
	}
	out := b.Bytes()
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return out, true
}

// writeResourceList writes items (each a document, or a rendered object
// encoded here and dropped once written), the functionConfig and the
// results as a ResourceList.
func writeResourceList(w outWriter, items []outItem, fc []byte, results fn.Results) error {
	w.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n")
	if len(items) == 0 {
		w.WriteString("items: []\n")
	} else {
		w.WriteString("items:\n")
		for i := range items {
			doc := items[i].doc
			if doc == nil {
				it, err := renderedItem(items[i].obj)
				if err != nil {
					return err
				}
				if it.id != items[i].id {
					return fmt.Errorf("cannot encode rendered object %q: its encoding names %q", items[i].id, it.id)
				}
				doc = it.doc
			}
			indent(w, doc, "- ", "  ")
			items[i] = outItem{} // written: the encoder may have it
		}
	}
	if fc != nil {
		w.WriteString("functionConfig:\n")
		indent(w, fc, "  ", "  ")
	}
	if len(results) > 0 {
		y, err := yaml.Marshal(results)
		if err != nil {
			return fmt.Errorf("cannot encode results: %w", err)
		}
		w.WriteString("results:\n")
		w.Write(y)
	}
	return nil
}

// indent writes doc with first before its first line and rest before every
// other non-empty line.
func indent(b outWriter, doc []byte, first, rest string) {
	p := first
	for len(doc) > 0 {
		i := bytes.IndexByte(doc, '\n')
		var l []byte
		if i < 0 {
			l, doc = doc, nil
		} else {
			l, doc = doc[:i], doc[i+1:]
		}
		if len(l) > 0 {
			b.WriteString(p)
			b.Write(l)
		}
		b.WriteString("\n")
		p = rest
	}
}
