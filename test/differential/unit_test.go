package differential

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/test/pkggen"
)

// TestShrinkWith: a package of many objects shrinks to the one record the
// predicate needs, with its zone and cluster, and nothing else.
func TestShrinkWith(t *testing.T) {
	var p pkggen.Package
	for s := uint64(0); ; s++ {
		p = pkggen.Generate(s, pkggen.Options{})
		if len(p.Objects) > 8 && hasType(p, "TXT") {
			break
		}
	}
	still := func(q pkggen.Package) bool { return hasType(q, "TXT") && hasKind(q, "BindCluster") }
	got, evals := shrinkWith(p, still, 10000, bindtools.Hang) // the evaluation budget bounds it; the deadline only guards a hang
	if len(got.Objects) != 2 {
		t.Fatalf("shrunk to %d objects in %d evaluations, want a cluster and one zone:\n%s", len(got.Objects), evals, got.YAML())
	}
	var z pkggen.Object
	for _, o := range got.Objects {
		if o.Kind != "BindCluster" {
			z = o
		}
	}
	// the predicate needs only the type: values, names, TTLs and every
	// other field go
	want := map[string]any{"records": []any{map[string]any{"type": "TXT"}}}
	if z.Kind == "DNSRecord" {
		want = map[string]any{"type": "TXT"}
	}
	if diff := cmp.Diff(want, z.Spec); diff != "" {
		t.Errorf("the record object keeps more than the predicate needs (-want +got):\n%s", diff)
	}
}

func hasKind(p pkggen.Package, kind string) bool {
	for _, o := range p.Objects {
		if o.Kind == kind {
			return true
		}
	}
	return false
}

func hasType(p pkggen.Package, typ string) bool {
	for _, o := range p.Objects {
		if o.Kind == "DNSRecord" && o.Spec["type"] == typ {
			return true
		}
		recs, _ := o.Spec["records"].([]any)
		for _, r := range recs {
			if m, ok := r.(map[string]any); ok && m["type"] == typ {
				return true
			}
		}
	}
	return false
}

// TestClassify: which verdicts are divergences.
func TestClassify(t *testing.T) {
	for name, tc := range map[string]struct {
		mistakes []string
		v        Verdict
		want     string // kind, "" for none
		reason   string
	}{
		"agree loads":            {v: Verdict{Accepted: true, Rendered: true}, reason: "accepted and BIND loads"},
		"accepted, BIND refuses": {v: Verdict{Accepted: true, Rendered: true, BIND: []Failure{{Stage: StageNamed}}}, want: AcceptedRefused, reason: "the defect the harness exists for"},
		"agree refused":          {v: Verdict{Errors: []string{"e"}, Rendered: true, BIND: []Failure{{Stage: StageCheckconf}}}, reason: "both refuse"},
		"refused, BIND loads":    {v: Verdict{Errors: []string{"e"}, Rendered: true}, want: RefusedLoads, reason: "refusal nobody documented"},
		"refused, documented":    {mistakes: []string{"undefined-key"}, v: Verdict{Errors: []string{"e"}, Rendered: true}, reason: "docs/validation.md names the refusal"},
		"refused, not askable":   {v: Verdict{Errors: []string{"e"}, Bypass: "render produced nothing"}, reason: "BIND cannot be asked honestly"},
	} {
		got := ""
		if d := Classify(tc.mistakes, tc.v); d != nil {
			got = d.Kind
		}
		if got != tc.want {
			t.Errorf("%s (%s): got %q, want %q", name, tc.reason, got, tc.want)
		}
	}
}

// TestProbeConf: the raw extraOptions lines and durations reach the probe
// as the user wrote them (a trailing comment stays a comment).
func TestProbeConf(t *testing.T) {
	p := pkggen.Package{Objects: []pkggen.Object{
		{Kind: "BindCluster", Name: "c", Spec: map[string]any{"extraOptions": []any{"minimal-responses yes # small", "edns-udp-size 1232;"}}},
		{Kind: "BindDNSSECPolicy", Name: "p", Spec: map[string]any{"purgeKeys": "1 hour"}},
	}}
	items := p.Items()
	for name, tc := range map[string]struct {
		r      diag.Result
		want   string
		ok     bool
		reason string
	}{
		"extraOptions": {
			r:      diag.Result{Source: items[0].Source, Field: "spec.extraOptions[0]"},
			want:   "options {\n\tdirectory \"/tmp\";\n\tminimal-responses yes # small\n\t;\n\tedns-udp-size 1232\n\t;\n};\n",
			ok:     true,
			reason: "every item of the cluster, each closed on its own line",
		},
		"duration": {
			r:      diag.Result{Source: items[1].Source, Field: "spec.purgeKeys"},
			want:   "dnssec-policy \"probe\" {\n\tpurge-keys 1 hour;\n};\noptions { directory \"/tmp\"; };\n",
			ok:     true,
			reason: "the raw value in its statement",
		},
		"no probe": {r: diag.Result{Source: items[1].Source, Field: "spec.keys[0].bits"}, reason: "a value no probe covers: the package is not askable"},
	} {
		got, ok := probeConf(items, tc.r)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s (%s): got %v %q, want %v %q", name, tc.reason, ok, got, tc.ok, tc.want)
		}
	}
	if !strings.Contains(probeOut(t, "options {\n\tdirectory \"/tmp\";\n\tminimal-responses yes # small\n\t;\n};\n"), "ok") {
		t.Error("BIND does not load an options line with a trailing comment: the probe's premise is wrong")
	}
}

func probeOut(t *testing.T, conf string) string {
	requirements(t)
	out, err := probe(t, conf)
	if err != nil {
		return out
	}
	return "ok"
}

// TestValueAt: a result's field path leads to the value the user wrote.
func TestValueAt(t *testing.T) {
	p := pkggen.Package{Objects: []pkggen.Object{{Kind: "BindZone", Name: "z", Spec: map[string]any{
		"records": []any{map[string]any{"name": "www", "values": []any{"a", "b"}}},
	}}}}
	items := p.Items()
	for name, tc := range map[string]struct {
		field  string
		want   string
		ok     bool
		reason string
	}{
		"nested":   {field: "spec.records[0].values[1]", want: "b", ok: true, reason: "list, map, list"},
		"name":     {field: "spec.records[0].name", want: "www", ok: true, reason: "a map in a list"},
		"list":     {field: "spec.records", reason: "not a string: no single value to look for"},
		"past end": {field: "spec.records[3].name", reason: "index out of range"},
		"missing":  {field: "spec.nameservers", reason: "absent"},
	} {
		got, ok := valueAt(items, diag.Result{Source: items[0].Source, Field: tc.field})
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s (%s): got %q %v, want %q %v", name, tc.reason, got, ok, tc.want, tc.ok)
		}
	}
}
