package gen_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"

	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

func TestGenerate(t *testing.T) {
	cases := map[string]struct {
		reason string
		opt    gen.Options
	}{
		"Small":     {reason: "a few zones, reverse zone included", opt: gen.Options{Zones: 9, Records: 500, Seed: 1}},
		"Views":     {reason: "zones spread over views", opt: gen.Options{Zones: 6, Records: 600, Seed: 2, Views: 3}},
		"NoObjects": {reason: "every record inline", opt: gen.Options{Zones: 2, Records: 100, Seed: 3, RecordObjects: -1}},
		"OneZone":   {reason: "one zone holds every record", opt: gen.Options{Zones: 1, Records: 2000, Seed: 4}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, b := gen.Generate(tc.opt), gen.Generate(tc.opt)
			if diff := cmp.Diff(a.ResourceList(), b.ResourceList()); diff != "" {
				t.Fatalf("%s: same options, different bytes (-first +second):\n%s", tc.reason, diff)
			}
			if a.Records != tc.opt.Records || a.Zones != tc.opt.Zones {
				t.Errorf("%s: generated %d zones, %d records; want %d, %d", tc.reason, a.Zones, a.Records, tc.opt.Zones, tc.opt.Records)
			}
			// The ResourceList is what kpt would send: the SDK reads it.
			rl, err := fn.ParseResourceList(a.ResourceList())
			if err != nil {
				t.Fatalf("%s: SDK cannot read the ResourceList: %v", tc.reason, err)
			}
			items, err := a.Items()
			if err != nil {
				t.Fatal(err)
			}
			if len(rl.Items) != len(items) {
				t.Errorf("%s: ResourceList has %d items, package %d", tc.reason, len(rl.Items), len(items))
			}
			// Every generated package is valid and renders.
			_, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
			if rs.HasErrors() {
				t.Fatalf("%s: generated package does not render: %v", tc.reason, rs)
			}
		})
	}
	if bytes.Equal(gen.Generate(gen.Options{Zones: 2, Records: 50, Seed: 1}).ResourceList(), gen.Generate(gen.Options{Zones: 2, Records: 50, Seed: 2}).ResourceList()) {
		t.Errorf("different seeds gave the same bytes")
	}
}
