package render_test

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// scaleZones is the zone count of the scale tests: 20,000 in `make test`
// (BINDFN_SCALE_ZONES=100000 for the size; hack/bench-scale.sh).
func scaleZones(t *testing.T) int {
	if s := os.Getenv("BINDFN_SCALE_ZONES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("BINDFN_SCALE_ZONES=%q: %v", s, err)
		}
		return n
	}
	return 20000
}

// scaleOptions is the scale package of n zones: 10 records each, two
// views, every tenth zone dynamic, 10% of the records DNSRecords.
func scaleOptions(n int) gen.Options {
	return gen.Options{Zones: n, Records: 10 * n, Seed: 1, Views: 2, Dynamic: 10}
}

// objectLimit is what the API server stores of one object: etcd's request
// limit is 1.5 MiB, and a ConfigMap's data may hold 1 MiB.
const objectLimit = 1 << 20

// TestScaleObjects renders a cluster of many zones (20,000; the issue's
// 100,000 with BINDFN_SCALE_ZONES) and checks what the API server would:
// every object's data at most 1 MiB, its annotations within limits, and
// <cluster>-config holding no zone (a line per shard and view). Then it adds one zone, and removes one, each
// rendered on the previous output, and counts the objects that changed: a
// handful, never every shard (docs/state.md#shards).
func TestScaleObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 20,000 zones")
	}
	n := scaleZones(t)
	items := genItems(t, scaleOptions(n), nil)
	objs := run(t, items, nil)
	sizes := map[string]int{}
	shards := 0
	for _, o := range objs {
		m := o.Obj.(metav1.Object)
		size := 0
		if cm, ok := o.Obj.(*corev1.ConfigMap); ok {
			for _, v := range cm.Data {
				size += len(v)
			}
			if _, _, ok := strings.Cut(cm.Name, "-zones-"); ok {
				shards++
			}
		}
		b, err := json.Marshal(o.Obj)
		if err != nil {
			t.Fatal(err)
		}
		sizes[o.Path] = len(b)
		if size > objectLimit || len(b) > objectLimit+objectLimit/2 {
			t.Errorf("%s: data %d bytes, %d serialized: over the API server's limits", o.Path, size, len(b))
		}
		if err := apivalidation.ValidateAnnotationsSize(m.GetAnnotations()); err != nil {
			t.Errorf("%s: %v", o.Path, err)
		}
	}
	cfg := sizes["rendered/gen/configmap_gen-config.yaml"]
	// <cluster>-config names each shard (an include per role and view, a
	// zoneDocs entry): it grows with the shards, each about 1,500 zones.
	if perShard := (cfg - 8<<10) / shards; cfg == 0 || perShard > 600 {
		t.Errorf("<cluster>-config of %d zones in %d shards is %d bytes serialized (%d a shard); want no zone in it, only a line per shard and view", n, shards, cfg, perShard)
	}
	total := 0
	for _, s := range sizes {
		total += s
	}
	t.Logf("%d zones: %d objects, %d zones ConfigMaps, %d bytes serialized, <cluster>-config %d bytes", n, len(objs), shards, total, cfg)

	// One zone added, rendered on the previous output.
	added := append(append([]model.Item(nil), items...), genItems(t, gen.Options{Zones: 1, Records: 10, Seed: 99, RecordObjects: -1}, func(file, doc string) string {
		if file != "zones.yaml" {
			return ""
		}
		doc = strings.Replace(doc, "zone0.example.com", "added-zone.example.com", 1)
		doc = strings.Replace(doc, "name: zone0-example-com", "name: added-zone", 1)
		return strings.Replace(doc, "nameservers:", "viewRef: view-0\n  nameservers:", 1)
	})...)
	objs2 := run(t, added, previous(t, objs))
	if c := changed(t, objs, objs2); len(c) == 0 || len(c) > 5 {
		t.Errorf("adding one zone to %d changed %d objects, want 1 to 5 (its shard; a split shard, <cluster>-config and the pod's slots now and then): %v", n, len(c), c)
	} else {
		t.Logf("adding one zone changed %v", c)
	}

	// One zone removed (its tombstone stays in its shard).
	var removed []model.Item
	for _, it := range items {
		if it.Source.Ref.Kind == "BindZone" && it.Source.Ref.Name == "zone1-example-net" {
			continue
		}
		if it.Source.Ref.Kind == "DNSRecord" && strings.HasPrefix(it.Source.Ref.Name, "zone1-example-net-") {
			continue
		}
		removed = append(removed, it)
	}
	if len(removed) == len(items) {
		t.Fatal("zone1-example-net is not in the package")
	}
	objs3 := run(t, removed, previous(t, objs))
	if c := changed(t, objs, objs3); len(c) == 0 || len(c) > 5 {
		t.Errorf("removing one zone of %d changed %d objects, want 1 to 5: %v", n, len(c), c)
	} else {
		t.Logf("removing one zone changed %v", c)
	}
}

// changed are the paths of the objects that differ between two renders
// (added and removed ones included).
func changed(t *testing.T, a, b []render.Object) []string {
	t.Helper()
	yaml := func(objs []render.Object) map[string]string {
		out := map[string]string{}
		for _, o := range objs {
			y, err := objects.YAML(o.Obj)
			if err != nil {
				t.Fatal(err)
			}
			out[o.Path] = string(y)
		}
		return out
	}
	ya, yb := yaml(a), yaml(b)
	var out []string
	for p, y := range ya {
		if yb[p] != y {
			out = append(out, p)
		}
	}
	for p := range yb {
		if _, ok := ya[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// TestScaleShardsOfZone: a zone's file, statements and agent configuration
// are in the one shard its key hashes to, over the shards the render made.
func TestScaleShardsOfZone(t *testing.T) {
	items := genItems(t, scaleOptions(3000), nil)
	objs := run(t, items, nil)
	data := map[int]map[string]string{}
	for _, o := range objs {
		if cm, ok := o.Obj.(*corev1.ConfigMap); ok {
			if n, ok := layout.ZonesShard("gen", cm.Name); ok {
				data[n] = cm.Data
			}
		}
	}
	if len(data) < 2 {
		t.Fatalf("3,000 zones in %d shards, want several", len(data))
	}
	for i := 0; i < 3000; i += 97 {
		zone := fmt.Sprintf("zone%d.example.%s", i, []string{"com", "net", "org", "io", "dev"}[i%5])
		if i%8 == 7 {
			continue
		}
		view := fmt.Sprintf("view-%d", i%2)
		file := model.ZoneFileName("db", view, zone)
		s := layout.ShardOf(file, len(data))
		if _, ok := data[s][file]; !ok {
			t.Errorf("%s is not in shard %d", file, s)
		}
		for _, role := range []string{"primary", "secondary"} {
			if !strings.Contains(data[s][layout.ZonesConfFile(role, view)], fmt.Sprintf("zone %q {", zone)) {
				t.Errorf("the %s's statement of %s is not in shard %d's %s", role, zone, s, layout.ZonesConfFile(role, view))
			}
		}
		if !strings.Contains(data[s][layout.ZonesDocFile], fmt.Sprintf("%q", zone)) {
			t.Errorf("%s is not in shard %d's %s", zone, s, layout.ZonesDocFile)
		}
	}
}

// TestScaleBadInput: bad input among many zones gives one located error per
// bad object, not one per zone. Two BindZones that repeat another's zone
// name: one error each, at its spec.zoneName. One zone whose statements
// alone pass what a zones ConfigMap carries (a 40,000-entry allowQuery): an
// error on that BindZone, and nothing rendered.
func TestScaleBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 5,000 zones")
	}
	// The count of results does not depend on the size: 5,000 zones keep
	// `make test` in budget (BINDFN_SCALE_ZONES sets it, 100,000 too).
	n := 5000
	if os.Getenv("BINDFN_SCALE_ZONES") != "" {
		n = scaleZones(t)
	}
	dup := func(file, doc string) string {
		if file != "zones.yaml" {
			return ""
		}
		for _, z := range []string{"zone2.example.org", "zone3.example.io"} {
			if strings.Contains(doc, "zoneName: "+z+"\n") {
				return strings.Replace(doc, "name: "+strings.ReplaceAll(z, ".", "-"), "name: copy-of-"+strings.ReplaceAll(z, ".", "-"), 1)
			}
		}
		return ""
	}
	items := genItems(t, scaleOptions(n), nil)
	dups := genItems(t, scaleOptions(4), dup)
	// The copies are in the same views as the originals (zone i in view
	// i%2): two zones of one name in one view.
	if len(dups) != 2 {
		t.Fatalf("%d copies, want 2", len(dups))
	}
	_, rs := pipeline.Run(pipeline.Input{Items: append(append([]model.Item(nil), items...), dups...)}, render.Options{Rand: &testutil.DetRand{}})
	var got []string
	for _, r := range rs {
		if r.Severity == diag.Error {
			got = append(got, r.Source.Ref.Name+" "+r.Field)
		}
	}
	sort.Strings(got)
	want := []string{"copy-of-zone2-example-org spec.zoneName", "copy-of-zone3-example-io spec.zoneName"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("two repeated zone names among %d zones: errors (-want +got):\n%s", n, diff)
	}

	// One zone whose statements cannot fit one zones ConfigMap.
	var b strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&b, "%q, ", fmt.Sprintf("10.%d.%d.0/24", i/256, i%256))
	}
	big := genItems(t, scaleOptions(4), func(file, doc string) string {
		if file == "zones.yaml" && strings.Contains(doc, "zoneName: zone1.example.net\n") {
			doc = strings.Replace(doc, "name: zone1-example-net", "name: wide-open", 1)
			doc = strings.Replace(doc, "zoneName: zone1.example.net", "zoneName: wide-open.example.net", 1)
			return strings.Replace(doc, "nameservers:", "allowQuery: ["+strings.TrimSuffix(b.String(), ", ")+"]\n  nameservers:", 1)
		}
		return ""
	})
	objs, rs := pipeline.Run(pipeline.Input{Items: append(append([]model.Item(nil), items...), big...)}, render.Options{Rand: &testutil.DetRand{}})
	got = nil
	for _, r := range rs {
		if r.Severity == diag.Error {
			got = append(got, r.Source.Ref.Kind+"/"+r.Source.Ref.Name+" "+r.Field)
		}
	}
	if diff := cmp.Diff([]string{"BindZone/wide-open spec.allowQuery"}, got); diff != "" {
		t.Errorf("one zone over a ConfigMap: errors (-want +got):\n%s\nall: %v", diff, rs)
	}
	if objs != nil {
		t.Errorf("%d objects rendered with an error", len(objs))
	}
}
