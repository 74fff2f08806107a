package agent

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

func TestPlanChange(t *testing.T) {
	ex, exInt := ZoneKey{"example.com", "external"}, ZoneKey{"example.com", "internal"}
	org := ZoneKey{"example.org", "external"}
	cat := ZoneKey{"catalog.example", "external"}
	stmt := func(k ZoneKey, body string) ZoneStmt { return ZoneStmt{ZoneKey: k, Body: body} }
	stmts := func(ss ...ZoneStmt) map[ZoneKey]ZoneStmt {
		m := map[ZoneKey]ZoneStmt{}
		for _, s := range ss {
			m[s.ZoneKey] = s
		}
		return m
	}
	catalog := ZoneStmt{ZoneKey: cat, Body: "{ type primary; };", Special: true}
	baseStmts := stmts(stmt(ex, "{ a }"), stmt(exInt, "{ b }"), catalog)
	base := Snapshot{Config: "c1", Zones: map[ZoneKey]string{ex: "a", exInt: "b"}, Stmts: baseStmts, NewZones: true}
	with := func(s Snapshot, f func(*Snapshot)) Snapshot {
		s.Zones, s.Stmts = maps.Clone(s.Zones), maps.Clone(s.Stmts)
		f(&s)
		return s
	}
	many := with(base, func(s *Snapshot) {
		for i := range MaxZoneCommands + 1 {
			k := ZoneKey{fmt.Sprintf("z%d.example", i), "external"}
			s.Stmts[k] = stmt(k, "{ z }")
		}
	})
	cases := map[string]struct {
		reason  string
		applied Snapshot // base when empty
		next    Snapshot
		want    Plan
	}{
		"Nothing": {
			reason: "the same files: named has nothing to load (a DNSRecord only changes what the agent converges)",
			next:   base,
			want:   Plan{},
		},
		"OneZoneFile": {
			reason: "one zone file changed: that zone alone is reloaded, no reconfig",
			next:   with(base, func(s *Snapshot) { s.Zones[ex] = "a2" }),
			want:   Plan{Reload: []ZoneKey{ex}},
		},
		"TwoZoneFilesSorted": {
			reason: "each changed zone is reloaded, by name then view",
			next:   with(base, func(s *Snapshot) { s.Zones[ex], s.Zones[exInt] = "a2", "b2" }),
			want:   Plan{Reload: []ZoneKey{ex, exInt}},
		},
		"Config": {
			reason: "the configuration beyond the zone statements changed: a reconfig, and no zone reload when no zone file changed",
			next:   with(base, func(s *Snapshot) { s.Config = "c2" }),
			want:   Plan{Reconfig: true},
		},
		"ConfigAndZone": {
			reason: "a reconfig does not re-read an existing zone's file: the changed zone is reloaded after it",
			next:   with(base, func(s *Snapshot) { s.Config, s.Zones[ex] = "c2", "a2" }),
			want:   Plan{Reconfig: true, Reload: []ZoneKey{ex}},
		},
		"ConfigAndZoneAdded": {
			reason: "with a reconfig a new zone is loaded by the reconfig: no addzone, no reload",
			next: with(base, func(s *Snapshot) {
				s.Config, s.Zones[org], s.Stmts[org] = "c2", "c", stmt(org, "{ c }")
			}),
			want: Plan{Reconfig: true},
		},
		"ZoneAdded": {
			reason: "a new zone statement alone: rndc addzone of that zone, which loads its file; no reconfig",
			next:   with(base, func(s *Snapshot) { s.Zones[org], s.Stmts[org] = "c", stmt(org, "{ c }") }),
			want:   Plan{Add: []ZoneStmt{stmt(org, "{ c }")}},
		},
		"ZoneRemoved": {
			reason: "a zone statement gone: rndc delzone of that zone; no reconfig",
			next:   with(base, func(s *Snapshot) { delete(s.Zones, exInt); delete(s.Stmts, exInt) }),
			want:   Plan{Delete: []ZoneKey{exInt}},
		},
		"ZoneModified": {
			reason: "a zone statement changed: rndc modzone with the new statement",
			next:   with(base, func(s *Snapshot) { s.Stmts[ex] = stmt(ex, "{ a2 }") }),
			want:   Plan{Modify: []ZoneStmt{stmt(ex, "{ a2 }")}},
		},
		"ZoneModifiedAndFile": {
			reason: "statement and file changed: modzone, then a reload so the file is read",
			next:   with(base, func(s *Snapshot) { s.Stmts[ex], s.Zones[ex] = stmt(ex, "{ a2 }"), "a2" }),
			want:   Plan{Modify: []ZoneStmt{stmt(ex, "{ a2 }")}, Reload: []ZoneKey{ex}},
		},
		"ZoneAddedWithoutNewZones": {
			reason:  "a config rendered without allow-new-zones (an older render): named refuses addzone, so a reconfig",
			applied: with(base, func(s *Snapshot) { s.NewZones = false }),
			next:    with(base, func(s *Snapshot) { s.NewZones, s.Zones[org], s.Stmts[org] = false, "c", stmt(org, "{ c }") }),
			want:    Plan{Reconfig: true},
		},
		"CatalogZoneModified": {
			reason: "the catalog zone is named by the view's catalog-zones: its statement changes with a reconfig",
			next:   with(base, func(s *Snapshot) { c := catalog; c.Body = "{ type primary; notify no; };"; s.Stmts[cat] = c }),
			want:   Plan{Reconfig: true},
		},
		"ManyZones": {
			reason: "more zone statements than MaxZoneCommands at once (a bulk import): one reconfig is cheaper",
			next:   many,
			want:   Plan{Reconfig: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			applied := tc.applied
			if applied.Config == "" {
				applied = base
			}
			got := PlanChange(applied, tc.next)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(ZoneStmt{})); diff != "" {
				t.Errorf("%s\nPlanChange (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFileZones(t *testing.T) {
	dir := filepath.Join(bindtools.RepoRoot(t), "internal", "render", "testdata", "example-authoritative", "rendered", "auth", "auth-config")
	cases := map[string]struct {
		reason string
		conf   string
		want   []FileZone
	}{
		"Primary": {
			reason: "the primary reads its static zones and the catalog from the mount and the signed zone's raw file; the dynamic zone's file is named's own",
			conf:   layout.NamedConfPrimary,
			want: []FileZone{
				{ZoneKey{"example.com", "internal"}, "/etc/bind-fn/zones/0/db.internal_example.com"},
				{ZoneKey{"rpz.example.internal", "internal"}, "/etc/bind-fn/zones/0/rpz.internal_rpz.example.internal"},
				{ZoneKey{"catalog.example.internal", "external"}, "/etc/bind-fn/zones/0/catalog.external_catalog.example.internal"},
				{ZoneKey{"example.com", "external"}, "/etc/bind-fn/zones/0/db.external_example.com"},
				{ZoneKey{"secure.example.com", "external"}, "/var/lib/bind/primary/db.external_secure.example.com"},
			},
		},
		"Secondary": {
			reason: "a secondary transfers every zone but the RPZ, which each pod loads from the mount",
			conf:   layout.NamedConfSecondary,
			want: []FileZone{
				{ZoneKey{"rpz.example.internal", "internal"}, "/etc/bind-fn/zones/0/rpz.internal_rpz.example.internal"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The zone statements are in the zones ConfigMaps' files,
			// rendered beside auth-config as auth-zones-<i>.
			stmts, err := namedconf.ReadConf(filepath.Join(dir, tc.conf), dir, func(p string) ([]byte, error) {
				if rest, ok := strings.CutPrefix(p, layout.ZonesDir+"/"); ok {
					shard, file, _ := strings.Cut(rest, "/")
					return os.ReadFile(filepath.Join(dir, "..", "auth-zones-"+shard, file))
				}
				if p == filepath.Join(dir, tc.conf) {
					return os.ReadFile(p)
				}
				return nil, nil // what the pod writes: keys, servers
			})
			if err != nil {
				t.Fatal(err)
			}
			got := locatedFileZones(stmts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nFileZones (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSnapshotPlan: what changed on disk → what the agent runs, through
// snapshot and PlanChange, on a primary's files.
func TestSnapshotPlan(t *testing.T) {
	type files map[string]string // path relative to the pod's root → content
	zone := func(www string) string {
		return "$TTL 300\n@ IN SOA ns. h. 1 3600 600 86400 300\n@ IN NS ns.\nwww IN A " + www + "\n"
	}
	conf := func(extra string) string {
		return `view "external" {
	zone "static.test" { type primary; file "@ROOT@/zones/0/static.test"; };
	zone "big.test" { type primary; file "@ROOT@/zones/0/big.test"; };
	zone "dyn.test" { type primary; file "@ROOT@/data/dyn.test"; allow-update { key "k"; }; };
` + extra + `};
`
	}
	doc := func(records ...string) string {
		d := layout.AgentConfigDoc{
			PrimaryConf: "@ROOT@/config/named.conf.primary", SecondaryConf: "@ROOT@/config/named.conf.secondary",
			DynamicZones: []layout.DynamicZone{{Zone: "dyn.test", View: "external", KeyName: "k", KeyFile: "@ROOT@/keys/auth-keys/k.conf", Source: "@ROOT@/zones/0/dyn.test", Records: records}},
		}
		b, _ := json.Marshal(d)
		return string(b)
	}
	base := files{
		"config/agent.json":            doc(),
		"config/named.conf.primary":    conf(""),
		"config/named.conf.secondary":  "// the secondaries'\n",
		"zones/0/static.test":          zone("192.0.2.1"),
		"zones/0/big.test":             "$INCLUDE @ROOT@/zones/1/big.test.part\n",
		"zones/1/big.test.part":        zone("192.0.2.2"),
		"zones/0/dyn.test":             zone("192.0.2.3"),
		"keys/auth-keys/k.conf":        "key k;\n",
		"data/dyn.test":                zone("192.0.2.3"),
		"zones/0/unused.test.leftover": "x",
	}
	ext := ZoneKey{"static.test", "external"}
	cases := map[string]struct {
		reason string
		change files
		want   Plan
	}{
		"DNSRecordSource": {
			reason: "a DNSRecord changes the dynamic zone's source file, which named never reads: converge only",
			change: files{"zones/0/dyn.test": zone("192.0.2.33")},
			want:   Plan{},
		},
		"DNSRecordInline": {
			reason: "records inline in agent.json are the agent's alone: converge only",
			change: files{"config/agent.json": doc("www 60 IN A 192.0.2.9")},
			want:   Plan{},
		},
		"StaticZone": {
			reason: "a static zone's file changed: that zone is reloaded, nothing else",
			change: files{"zones/0/static.test": zone("192.0.2.11")},
			want:   Plan{Reload: []ZoneKey{ext}},
		},
		"IncludedPart": {
			reason: "a part $INCLUDEd from another zones ConfigMap changed: its zone is reloaded",
			change: files{"zones/1/big.test.part": zone("192.0.2.22")},
			want:   Plan{Reload: []ZoneKey{{"big.test", "external"}}},
		},
		"OtherRolesConfig": {
			reason: "the secondaries' named.conf is not the primary's: nothing to do here",
			change: files{"config/named.conf.secondary": "// changed\n"},
			want:   Plan{},
		},
		"UnusedFile": {
			reason: "a file of the zones mount no zone loads is not named's",
			change: files{"zones/0/unused.test.leftover": "y"},
			want:   Plan{},
		},
		"ActiveConfig": {
			reason: "the active named.conf changed beyond its zones: reconfig (checkconf first)",
			change: files{"config/named.conf.primary": conf("\tnotify-rate 20;\n")},
			want:   Plan{Reconfig: true},
		},
		"Comment": {
			reason: "a comment is nothing named reads",
			change: files{"config/named.conf.primary": conf("\t// a comment\n")},
			want:   Plan{},
		},
		"ZoneAdded": {
			reason: "a zone added to a config without allow-new-zones: the reconfig loads it",
			change: files{"config/named.conf.primary": conf("\tzone \"new.test\" { type primary; file \"@ROOT@/zones/0/static.test\"; };\n")},
			want:   Plan{Reconfig: true},
		},
		"Key": {
			reason: "a key mount changed: reconfig",
			change: files{"keys/auth-keys/k.conf": "key k2;\n"},
			want:   Plan{Reconfig: true},
		},
		"AgentConfigForNamed": {
			reason: "agent.json beyond the dynamic records (here the update key's name) shapes what named reads: reconfig",
			change: files{"config/agent.json": strings.Replace(doc(), `"keyName":"k"`, `"keyName":"k2"`, 1)},
			want:   Plan{Reconfig: true},
		},
	}
	lay := func(t *testing.T, root string, fs files) {
		t.Helper()
		for p, content := range fs {
			p = filepath.Join(root, p)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "@ROOT@", root)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			lay(t, root, base)
			snap := snapshotter(t, root)
			before := snap()
			if got := len(before.Zones); got != 2 {
				t.Fatalf("snapshot holds %d zones, want static.test and big.test: %v", got, before.Zones)
			}
			lay(t, root, tc.change)
			if diff := cmp.Diff(tc.want, PlanChange(before, snap()), cmpopts.IgnoreUnexported(ZoneStmt{})); diff != "" {
				t.Errorf("%s\nplan (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// snapshotter is an agent of pod 0 over the pod laid out under root, its
// active config the primary's: each call of the function it returns is
// the agent's snapshot of what is laid out then.
func snapshotter(t *testing.T, root string) func() Snapshot {
	t.Helper()
	a := &Agent{opt: Options{ConfigFile: filepath.Join(root, "config", "agent.json"), ZonesDir: filepath.Join(root, "zones"),
		KeysDir: filepath.Join(root, "keys"), RNDCDir: filepath.Join(root, "rndc"), RunDir: filepath.Join(root, "run")}}
	if err := os.MkdirAll(a.opt.RunDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "config", "named.conf.primary"), a.activeConf()); err != nil {
		t.Fatal(err)
	}
	return func() Snapshot {
		t.Helper()
		cfg, err := LoadConfig(a.opt.ConfigFile)
		if err != nil {
			t.Fatal(err)
		}
		s, err := a.snapshot(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// TestSnapshotZoneByZone: a config that allows new zones and includes its
// zone statements from several files (one per ConfigMap, as a sharded
// render lays them): one zone added, changed or removed in one file is
// that zone's rndc command, and the check config holds that zone alone.
func TestSnapshotZoneByZone(t *testing.T) {
	root := t.TempDir()
	zone := "$TTL 300\n@ IN SOA ns. h. 1 3600 600 86400 300\n@ IN NS ns.\n"
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "@ROOT@", root)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zoneStmt := func(name string) string {
		return "zone \"" + name + "\" { type primary; file \"@ROOT@/zones/0/db." + name + "\"; allow-transfer { key \"k\"; }; };\n"
	}
	write("config/agent.json", `{"primaryConf":"@ROOT@/config/named.conf.primary","secondaryConf":"@ROOT@/config/named.conf.secondary"}`)
	write("config/named.conf.primary", `key "k" { algorithm hmac-sha256; secret "c2VjcmV0"; };
options { directory "@ROOT@/data"; allow-new-zones yes; };
include "@ROOT@/zonestmts/0/zones.conf";
include "@ROOT@/zonestmts/1/zones.conf";
`)
	write("zonestmts/0/zones.conf", zoneStmt("a.test")+zoneStmt("b.test"))
	write("zonestmts/1/zones.conf", zoneStmt("c.test"))
	for _, z := range []string{"a.test", "b.test", "c.test", "d.test"} {
		write("zones/0/db."+z, zone)
	}
	snap := snapshotter(t, root)
	before := snap()
	if !before.NewZones || len(before.Stmts) != 3 || len(before.Zones) != 3 {
		t.Fatalf("snapshot: NewZones %v, %d statements, %d zone files; want true, 3, 3", before.NewZones, len(before.Stmts), len(before.Zones))
	}
	if diff := cmp.Diff([]string{filepath.Join(root, "data")}, before.nzdDirs); diff != "" {
		t.Errorf("named keeps its added zones in its directory (-want +got):\n%s", diff)
	}
	body := func(name string) string {
		return "{\ntype primary;\nfile \"" + root + "/zones/0/db." + name + "\";\n\nallow-transfer {\n\tkey \"k\";\n};\n};"
	}
	d := ZoneKey{Zone: "d.test"}
	cases := map[string]struct {
		reason string
		file   string
		conf   string
		want   Plan
	}{
		"Add": {
			reason: "a zone statement added to one include: addzone with its statement",
			file:   "zonestmts/1/zones.conf", conf: zoneStmt("c.test") + zoneStmt("d.test"),
			want: Plan{Add: []ZoneStmt{{ZoneKey: d, Body: body("d.test"), Where: filepath.Join(root, "zonestmts/1/zones.conf") + ":2"}}},
		},
		"Remove": {
			reason: "a zone statement gone: delzone",
			file:   "zonestmts/0/zones.conf", conf: zoneStmt("a.test"),
			want: Plan{Delete: []ZoneKey{{Zone: "b.test"}}},
		},
		"Moved": {
			reason: "a zone statement moved to another include unchanged: nothing for named",
			file:   "zonestmts/1/zones.conf", conf: zoneStmt("c.test") + zoneStmt("b.test"),
			want: Plan{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old, err := os.ReadFile(filepath.Join(root, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer write(tc.file, string(old))
			write(tc.file, tc.conf)
			next := snap()
			got := PlanChange(before, next)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(ZoneStmt{})); diff != "" {
				t.Errorf("%s\nplan (-want +got):\n%s", tc.reason, diff)
			}
			keep := map[ZoneKey]bool{}
			for _, z := range got.Add {
				keep[z.ZoneKey] = true
			}
			conf, err := zoneCheckConf(next, keep)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(conf), "zone \""); n != len(keep) {
				t.Errorf("the check config holds %d zone statements, want the %d added:\n%s", n, len(keep), conf)
			}
		})
	}
}

// TestReadConfViews: zones in views are keyed by their view and checked
// inside it; allow-new-zones holds when every view allows it (its own
// setting, else the options'); the catalog and policy zones the views name
// are special.
func TestReadConfViews(t *testing.T) {
	conf := func(internal string) string {
		return `options { directory "/var/lib/bind"; allow-new-zones yes; };
view "external" {
	match-clients { any; };
	catalog-zones { zone "catalog.example" default-primaries { 192.0.2.1; }; };
	zone "catalog.example" { type primary; file "/z/catalog"; };
	zone "example.com" { type primary; file "/z/ext"; };
};
view "internal" {
	` + internal + `
	response-policy { zone "rpz.example"; };
	zone "rpz.example" { type primary; file "/z/rpz"; };
	zone "example.com" { type primary; file "/z/int"; };
};
`
	}
	read := func(t *testing.T, text string) Snapshot {
		t.Helper()
		stmts, err := namedconf.ReadConf("named.conf", "/", func(string) ([]byte, error) { return []byte(text), nil })
		if err != nil {
			t.Fatal(err)
		}
		var s Snapshot
		if err := s.readConf(sha256.New(), stmts); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := read(t, conf(""))
	if !s.NewZones {
		t.Error("NewZones = false, want true: both views inherit the options' allow-new-zones yes")
	}
	var special []string
	for k, z := range s.Stmts {
		if z.Special {
			special = append(special, k.String())
		}
	}
	sort.Strings(special)
	if diff := cmp.Diff([]string{"catalog.example/external", "rpz.example/internal"}, special); diff != "" {
		t.Errorf("special zones (-want +got):\n%s", diff)
	}
	if read(t, conf("allow-new-zones no;")).NewZones {
		t.Error("NewZones = true with a view that says allow-new-zones no")
	}
	check, err := zoneCheckConf(s, map[ZoneKey]bool{{Zone: "example.com", View: "internal"}: true})
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, string(check))
	var keys []string
	for k := range got.Stmts {
		keys = append(keys, k.String())
	}
	sort.Strings(keys)
	if diff := cmp.Diff([]string{"catalog.example/external", "example.com/internal", "rpz.example/internal"}, keys); diff != "" {
		t.Errorf("zones of the check config (-want +got):\n%s\n%s", diff, check)
	}
}
