package krm_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"

	"git.unkin.net/unkin/bind-fn/internal/krm"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestZoneSummaryResults: under kpt a render that changes a zone says so in
// one info result per changed zone (docs/design.md#plan-import), on both KRM paths; a
// re-render that changes nothing says nothing, and validate mode never does.
func TestZoneSummaryResults(t *testing.T) {
	zone := func(ip string) string {
		return `- apiVersion: bind.unkin.net/v1alpha1
  kind: BindZone
  metadata: {name: z, namespace: dns}
  spec:
    clusterRef: dns
    zoneName: example.com
    nameservers: [ns1.example.net.]
    records:
    - {name: www, type: A, values: ["` + ip + `"]}
`
	}
	infos := func(rl *fn.ResourceList) []string {
		var out []string
		for _, r := range rl.Results {
			if r.Severity == fn.Info && strings.Contains(r.Message, "example.com") {
				out = append(out, r.Message)
			}
		}
		return out
	}
	for name, run := range map[string]func(p *krm.Processor, in []byte) ([]byte, error){
		"stream": func(p *krm.Processor, in []byte) ([]byte, error) { return p.Run(in) },
		"sdk": func(p *krm.Processor, in []byte) ([]byte, error) {
			return fn.Run(fn.ResourceListProcessorFunc(p.Process), in)
		},
	} {
		render := func(mode krm.Mode, in []byte) *fn.ResourceList {
			out, err := run(&krm.Processor{Mode: mode, Rand: &testutil.DetRand{}}, in)
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, out)
			}
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			return rl
		}
		first := render(krm.RenderMode, []byte(inputHead+zone("192.0.2.1")))
		if got := infos(first); len(got) != 0 {
			t.Errorf("%s: a first render (no previous output) summarised zones: %q", name, got)
		}
		b, err := first.ToYAML()
		if err != nil {
			t.Fatal(err)
		}
		same := render(krm.RenderMode, b)
		if got := infos(same); len(got) != 0 {
			t.Errorf("%s: a re-render without change summarised zones: %q", name, got)
		}
		changed := []byte(strings.Replace(string(b), `192.0.2.1`, `192.0.2.2`, 1))
		got := infos(render(krm.RenderMode, changed))
		if diff := cmp.Diff(1, len(got)); diff != "" {
			t.Errorf("%s: a changed zone gives one info result (-want +got):\n%s\n%q", name, diff, got)
		}
		if got := infos(render(krm.ValidateMode, changed)); len(got) != 0 {
			t.Errorf("%s: validate mode summarised zones: %q", name, got)
		}
	}
}
