package render_test

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

// scenario is one input package and the golden directory of its render.
type scenario struct {
	input  string
	golden string
}

// scenarios: the bundled examples plus the cases under testdata/cases.
func scenarios(t *testing.T) map[string]scenario {
	t.Helper()
	root := bindtools.RepoRoot(t)
	out := map[string]scenario{}
	for _, ex := range []string{"authoritative", "resolver", "multi-cluster"} {
		out["example-"+ex] = scenario{input: filepath.Join(root, "examples", ex), golden: filepath.Join("testdata", "example-"+ex)}
	}
	dirs, _ := filepath.Glob(filepath.Join("testdata", "cases", "*"))
	for _, d := range dirs {
		name := filepath.Base(d)
		out[name] = scenario{input: filepath.Join(d, "input"), golden: filepath.Join(d, "golden")}
	}
	return out
}

func run(t *testing.T, items []model.Item, prev []prior.Object) []render.Object {
	t.Helper()
	objs, rs := pipeline.Run(pipeline.Input{Items: items, Previous: prev}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		for _, r := range rs {
			t.Log(r)
		}
		t.Fatalf("render failed")
	}
	return objs
}

// files flattens a render into named files: per cluster its named.conf
// variants, agent.json, every zone file, and every object as YAML.
func files(t *testing.T, objs []render.Object) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, o := range objs {
		y, err := objects.YAML(o.Obj)
		if err != nil {
			t.Fatal(err)
		}
		out[o.Path] = y
		if cm, ok := o.Obj.(*corev1.ConfigMap); ok {
			for k, v := range cm.Data {
				out[filepath.Join(filepath.Dir(o.Path), cm.Name, k)] = []byte(v)
			}
		}
	}
	return out
}

func TestGolden(t *testing.T) {
	for name, sc := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			got := files(t, run(t, testutil.ReadItems(t, sc.input), nil))
			golden.CheckDir(t, sc.golden, got)
		})
	}
}

// TestDeterministic: shuffled input gives the same bytes, and rendering the
// output again (as kpt does, the previous output in the input) changes nothing.
func TestDeterministic(t *testing.T) {
	for name, sc := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			items := testutil.ReadItems(t, sc.input)
			first := files(t, run(t, items, nil))
			for seed := uint64(1); seed <= 5; seed++ {
				got := files(t, run(t, testutil.Shuffle(items, seed), nil))
				if diff := cmp.Diff(first, got); diff != "" {
					t.Fatalf("shuffle seed %d changed the output:\n%s", seed, diff)
				}
			}
			objs := run(t, items, nil)
			again := files(t, run(t, items, previous(t, objs)))
			if diff := cmp.Diff(first, again); diff != "" {
				t.Fatalf("rendering with the previous output changed it:\n%s", diff)
			}
		})
	}
}

// previous turns rendered objects into the previous-output view the adapters build.
func previous(t *testing.T, objs []render.Object) []prior.Object {
	t.Helper()
	var out []prior.Object
	for _, o := range objs {
		if p, ok := prior.ObjectOf(o.Obj); ok {
			out = append(out, p)
		}
	}
	return out
}

var ipLiteral = regexp.MustCompile(`\b(\d{1,3}(?:\.\d{1,3}){3})\b|([0-9a-fA-F]{0,4}:[0-9a-fA-F:]{2,}(?:/\d+)?)`)

// TestNoForeignAddresses: every IP literal in rendered config is in the
// input — no pod IP, no address learnt at run time (docs/design.md#no-runtime-address) — apart from
// loopback for the control channel.
func TestNoForeignAddresses(t *testing.T) {
	for name, sc := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			var input strings.Builder
			for _, it := range testutil.ReadItems(t, sc.input) {
				input.Write(it.JSON)
			}
			for p, b := range files(t, run(t, testutil.ReadItems(t, sc.input), nil)) {
				if !strings.Contains(p, "named.conf") {
					continue
				}
				for _, m := range ipLiteral.FindAllString(string(b), -1) {
					addr, err := netip.ParsePrefix(m)
					if err != nil {
						a, err2 := netip.ParseAddr(m)
						if err2 != nil {
							continue
						}
						addr = netip.PrefixFrom(a, a.BitLen())
					}
					if addr.Addr().IsLoopback() {
						continue
					}
					if !strings.Contains(input.String(), m) {
						t.Errorf("%s: address %s is not in the input", p, m)
					}
				}
			}
		})
	}
}

// TestCheckConf runs the real named-checkconf -z over both roles of every
// cluster, with the files laid out where the pod mounts them.
func TestCheckConf(t *testing.T) {
	bindtools.RequireBIND(t)
	for name, sc := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			for cname, c := range testutil.Clusters(t, run(t, testutil.ReadItems(t, sc.input), nil)) {
				root := t.TempDir()
				testutil.LayPod(t, root, c)
				for _, f := range []string{layout.NamedConfPrimary, layout.NamedConfSecondary} {
					out, err := bindtools.NamedCheckconf(t, root, layout.ConfigFile(f))
					if err != nil {
						t.Errorf("cluster %s %s: named-checkconf -z failed: %v\n%s", cname, f, err, out)
					}
				}
			}
		})
	}
}

var _ = fmt.Sprint

// TestEveryObjectIsOutput: the adapters recognise each object a render makes
// as previous output (objects.IsOutput); an unrecognised one would pass
// through beside its re-render, and its key material would be regenerated.
func TestEveryObjectIsOutput(t *testing.T) {
	for name, sc := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			for _, o := range run(t, testutil.ReadItems(t, sc.input), nil) {
				m := o.Obj.(metav1.ObjectMetaAccessor).GetObjectMeta()
				gvk := o.Obj.(runtime.Object).GetObjectKind().GroupVersionKind()
				if !objects.IsOutput(gvk.GroupVersion().String(), gvk.Kind, m.GetName(), m.GetLabels()) {
					t.Errorf("%s %s/%s is rendered but not recognised as previous output (objects.IsOutput)", gvk.Kind, m.GetNamespace(), m.GetName())
				}
			}
		})
	}
}
