package render_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// genItems is a generated package as pipeline items.
func genItems(t testing.TB, o gen.Options, edit func(file, doc string) string) []model.Item {
	t.Helper()
	p := gen.Generate(o)
	var items []model.Item
	for _, f := range p.FileNames() {
		var docs []string
		for _, d := range p.Files[f] {
			if edit != nil {
				d = edit(f, d)
			}
			docs = append(docs, d)
		}
		its, err := testutil.DecodeItems(f, []byte(strings.Join(docs, "---\n")))
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, its...)
	}
	return items
}

var includeLine = regexp.MustCompile(`(?m)^\$INCLUDE (\S+)\n`)

// TestShardLargeZone renders one zone far larger than a ConfigMap can hold:
// every ConfigMap must stay under 1 MiB serialized, the zone is split into
// parts joined by $INCLUDE of their mounted paths, and BIND loads the
// result from the pod's files (named-checkzone and named-checkconf -z).
func TestShardLargeZone(t *testing.T) {
	bindtools.RequireBIND(t)
	const records = 30000
	items := genItems(t, gen.Options{Zones: 1, Records: records, Seed: 7}, nil)
	objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		t.Fatalf("render failed: %v", rs)
	}
	shards := 0
	for _, o := range objs {
		cm, ok := o.Obj.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		if strings.Contains(cm.Name, "-zones-") {
			shards++
		}
		y, err := objects.YAML(cm)
		if err != nil {
			t.Fatal(err)
		}
		j, err := json.Marshal(cm)
		if err != nil {
			t.Fatal(err)
		}
		if len(y) >= 1<<20 || len(j) >= 1<<20 {
			t.Errorf("ConfigMap %s is %d bytes as YAML, %d as JSON: Kubernetes refuses objects of 1 MiB", cm.Name, len(y), len(j))
		}
	}
	if shards < 2 {
		t.Fatalf("a zone of %d records rendered into %d zones ConfigMaps, want it split over several", records, shards)
	}

	c := testutil.Clusters(t, objs)["gen"]
	root := t.TempDir()
	testutil.LayPod(t, root, c)

	const zone = "zone0.example.com"
	mainFile := layout.ZoneFile(0, "db.zone0.example.com")
	for _, f := range c.ConfigMaps {
		for k := range f.Data {
			if k == "db.zone0.example.com" {
				mainFile = layout.ZoneFile(shardOf(t, c, k), k)
			}
		}
	}
	text, err := os.ReadFile(filepath.Join(root, mainFile))
	if err != nil {
		t.Fatal(err)
	}
	incs := includeLine.FindAllSubmatch(text, -1)
	if len(incs) < 2 {
		t.Fatalf("the zone file %s includes %d parts, want it split:\n%s", mainFile, len(incs), text)
	}
	// Reassemble: every part where its $INCLUDE stands; the whole must
	// parse as the zone with every record.
	whole := includeLine.ReplaceAllFunc(text, func(m []byte) []byte {
		p := includeLine.FindSubmatch(m)[1]
		b, err := os.ReadFile(filepath.Join(root, string(p)))
		if err != nil {
			t.Fatalf("included part: %v", err)
		}
		return b
	})
	zp := dns.NewZoneParser(bytes.NewReader(whole), dns.Fqdn(zone), "")
	zp.SetIncludeAllowed(false)
	rrs := 0
	for _, ok := zp.Next(); ok; _, ok = zp.Next() {
		rrs++
	}
	if err := zp.Err(); err != nil {
		t.Fatalf("reassembled zone does not parse: %v", err)
	}
	if rrs < records {
		t.Errorf("reassembled zone has %d RRs, want at least %d", rrs, records)
	}
	if bytes.Contains(whole, []byte("$INCLUDE")) {
		t.Errorf("a part includes another part")
	}
	out, err := bindtools.Offline(t, bindtools.BINDPath(t, "named-checkzone"), "-t", root, "-i", "local", zone, mainFile).CombinedOutput()
	if err != nil {
		t.Fatalf("named-checkzone on the split zone: %v\n%s", err, out)
	}
	wholeFile := filepath.Join(t.TempDir(), "whole.db")
	testutil.WriteFile(t, wholeFile, whole)
	if out, err := bindtools.NamedCheckzone(t, zone, wholeFile); err != nil {
		t.Fatalf("named-checkzone on the reassembled zone: %v\n%s", err, out)
	}
	for _, f := range []string{layout.NamedConfPrimary, layout.NamedConfSecondary} {
		if out, err := bindtools.NamedCheckconf(t, root, layout.ConfigFile(f)); err != nil {
			t.Errorf("named-checkconf -z %s: %v\n%s", f, err, out)
		}
	}
}

func shardOf(t *testing.T, c *testutil.Cluster, key string) int {
	t.Helper()
	for i := 0; ; i++ {
		cm := c.ConfigMaps[layout.ZonesConfigMapName(c.Name, i)]
		if cm == nil {
			t.Fatalf("no shard holds %s", key)
		}
		if _, ok := cm.Data[key]; ok {
			return i
		}
	}
}

// TestShardDynamicZone: a dynamic zone of 30,000 records (DNSRecords are
// dynamic updates) renders: its file is split over zones ConfigMaps like a
// static zone's (the agent inlines the parts when it seeds it), agent.json
// names that file as the source of the desired RRsets and carries no
// records, and every ConfigMap stays under the budget (docs/design.md#sharded-zones).
func TestShardDynamicZone(t *testing.T) {
	items := genItems(t, gen.Options{Zones: 1, Records: 30000, Seed: 7}, func(file, doc string) string {
		if file == "cluster.yaml" {
			return doc + "---\napiVersion: bind.unkin.net/v1alpha1\nkind: BindTSIGKey\nmetadata:\n  name: ddns\n  namespace: dns\nspec:\n  clusterRef: gen\n"
		}
		if file == "zones.yaml" {
			return strings.Replace(doc, "  zoneName:", "  dynamicUpdate: true\n  updateKeyRef: ddns\n  zoneName:", 1)
		}
		return doc
	})
	objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		t.Fatalf("a large dynamic zone is refused: %v", rs)
	}
	c := testutil.Clusters(t, objs)["gen"]
	for name, cm := range c.ConfigMaps {
		size := 0
		for _, v := range cm.Data {
			size += len(v)
		}
		if size > render.ShardBudget+64<<10 {
			t.Errorf("ConfigMap %s carries %d bytes, over the budget %d", name, size, render.ShardBudget)
		}
	}
	doc := testutil.AgentConfig(t, c)
	if len(doc.DynamicZones) != 1 || len(doc.SeedZones) != 1 {
		t.Fatalf("agent.json: %d dynamic zones, %d seeds, want 1 and 1", len(doc.DynamicZones), len(doc.SeedZones))
	}
	dz := doc.DynamicZones[0]
	if dz.Source == "" || dz.Source != doc.SeedZones[0].Source || len(dz.Records) != 0 {
		t.Errorf("dynamic zone source %q (seed source %q), %d records in agent.json; want the seed's file and none", dz.Source, doc.SeedZones[0].Source, len(dz.Records))
	}
	main := ""
	for _, cm := range c.ConfigMaps {
		for k, v := range cm.Data {
			if strings.HasSuffix(dz.Source, "/"+k) {
				main = v
			}
		}
	}
	if !strings.Contains(main, "$INCLUDE ") {
		t.Errorf("the dynamic zone's file is not split:\n%.300s", main)
	}
}
