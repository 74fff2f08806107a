package pipeline_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

func TestZoneSummary(t *testing.T) {
	items := testutil.ReadItems(t, filepath.Join(bindtools.RepoRoot(t), "examples", "authoritative"))
	first, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		t.Fatal(rs)
	}
	var prev []prior.Object
	for _, o := range first {
		if p, ok := prior.ObjectOf(o.Obj); ok {
			prev = append(prev, p)
		}
	}
	// One record changes in the external view's example.com.
	edited := make([]model.Item, len(items))
	copy(edited, items)
	for i, it := range edited {
		if it.Source.Ref.Kind == "DNSRecord" && it.Source.Ref.Name == "blog" {
			edited[i].JSON = []byte(`{"apiVersion":"bind.unkin.net/v1alpha1","kind":"DNSRecord","metadata":{"name":"blog","namespace":"dns"},"spec":{"zoneRef":"example-com","name":"blog","type":"A","values":["198.51.100.31"]}}`)
		}
	}
	second, rs := pipeline.Run(pipeline.Input{Items: edited, Previous: prev}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		t.Fatal(rs)
	}
	var got []string
	for _, r := range pipeline.ZoneSummary(prev, second) {
		got = append(got, string(r.Severity)+": "+r.Message)
	}
	want := []string{`info: zone "example.com" (view external): changed, serial 1 → 2 (bind-fn plan shows the records)`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("one changed zone, one line (-want +got):\n%s", d)
	}
	if got := pipeline.ZoneSummary(nil, second); len(got) != 0 {
		t.Errorf("without a previous render nothing is summarised, got %v", got)
	}
}

// TestZoneSummaryRemoveRestore: a removed zone is one "removed" line (its
// tombstone stays in the output), restored one "added" line that goes on
// above its last serial.
func TestZoneSummaryRemoveRestore(t *testing.T) {
	items := testutil.ReadItems(t, filepath.Join(bindtools.RepoRoot(t), "examples", "authoritative"))
	var without []model.Item
	for _, it := range items {
		if it.Source.Ref.Kind != "BindZone" || it.Source.Ref.Name != "example-com-internal" {
			without = append(without, it)
		}
	}
	run := func(items []model.Item, prev []prior.Object) ([]render.Object, []prior.Object) {
		objs, rs := pipeline.Run(pipeline.Input{Items: items, Previous: prev}, render.Options{Rand: &testutil.DetRand{}})
		if rs.HasErrors() {
			t.Fatal(rs)
		}
		var out []prior.Object
		for _, o := range objs {
			if p, ok := prior.ObjectOf(o.Obj); ok {
				out = append(out, p)
			}
		}
		return objs, out
	}
	lines := func(prev []prior.Object, objs []render.Object) []string {
		var got []string
		for _, r := range pipeline.ZoneSummary(prev, objs) {
			got = append(got, r.Message)
		}
		return got
	}
	_, first := run(items, nil)
	removed, second := run(without, first)
	if d := cmp.Diff([]string{`zone "example.com" (view internal): removed (bind-fn plan shows the records)`}, lines(first, removed)); d != "" {
		t.Errorf("removed zone (-want +got):\n%s", d)
	}
	restored, _ := run(items, second)
	if d := cmp.Diff([]string{`zone "example.com" (view internal): added, serial 1 (bind-fn plan shows the records)`}, lines(second, restored)); d != "" {
		t.Errorf("restored zone, same content, same serial (-want +got):\n%s", d)
	}
}
