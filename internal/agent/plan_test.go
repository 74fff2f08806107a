package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

func TestPlanChange(t *testing.T) {
	ex, exInt := ZoneKey{"example.com", "external"}, ZoneKey{"example.com", "internal"}
	org := ZoneKey{"example.org", "external"}
	base := Snapshot{Config: "c1", Zones: map[ZoneKey]string{ex: "a", exInt: "b"}}
	cases := map[string]struct {
		reason string
		next   Snapshot
		want   Plan
	}{
		"Nothing": {
			reason: "the same files: named has nothing to load (a DNSRecord only changes what the agent converges)",
			next:   base,
			want:   Plan{},
		},
		"OneZoneFile": {
			reason: "one zone file changed: that zone alone is reloaded, no reconfig",
			next:   Snapshot{Config: "c1", Zones: map[ZoneKey]string{ex: "a2", exInt: "b"}},
			want:   Plan{Reload: []ZoneKey{ex}},
		},
		"TwoZoneFilesSorted": {
			reason: "each changed zone is reloaded, by name then view",
			next:   Snapshot{Config: "c1", Zones: map[ZoneKey]string{ex: "a2", exInt: "b2"}},
			want:   Plan{Reload: []ZoneKey{ex, exInt}},
		},
		"Config": {
			reason: "the configuration changed: a reconfig, and no zone reload when no zone file changed",
			next:   Snapshot{Config: "c2", Zones: base.Zones},
			want:   Plan{Reconfig: true},
		},
		"ConfigAndZone": {
			reason: "a reconfig does not re-read an existing zone's file: the changed zone is reloaded after it",
			next:   Snapshot{Config: "c2", Zones: map[ZoneKey]string{ex: "a2", exInt: "b"}},
			want:   Plan{Reconfig: true, Reload: []ZoneKey{ex}},
		},
		"ZoneAdded": {
			reason: "a new zone is loaded by the reconfig, even if the rest hashed the same",
			next:   Snapshot{Config: "c1", Zones: map[ZoneKey]string{ex: "a", exInt: "b", org: "c"}},
			want:   Plan{Reconfig: true},
		},
		"ZoneRemoved": {
			reason: "a zone gone from the config needs a reconfig to drop it",
			next:   Snapshot{Config: "c1", Zones: map[ZoneKey]string{ex: "a"}},
			want:   Plan{Reconfig: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := PlanChange(base, tc.next)
			if diff := cmp.Diff(tc.want, got); diff != "" {
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
			reason: "the active named.conf changed: reconfig (checkconf first)",
			change: files{"config/named.conf.primary": conf("\t// a comment\n")},
			want:   Plan{Reconfig: true},
		},
		"ZoneAdded": {
			reason: "a zone added to the config: the reconfig loads it",
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
			a := &Agent{opt: Options{ConfigFile: filepath.Join(root, "config", "agent.json"), ZonesDir: filepath.Join(root, "zones"),
				KeysDir: filepath.Join(root, "keys"), RNDCDir: filepath.Join(root, "rndc"), RunDir: filepath.Join(root, "run")}}
			if err := os.MkdirAll(a.opt.RunDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(root, "config", "named.conf.primary"), a.activeConf()); err != nil {
				t.Fatal(err)
			}
			snap := func() Snapshot {
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
			before := snap()
			if got := len(before.Zones); got != 2 {
				t.Fatalf("snapshot holds %d zones, want static.test and big.test: %v", got, before.Zones)
			}
			lay(t, root, tc.change)
			if diff := cmp.Diff(tc.want, PlanChange(before, snap())); diff != "" {
				t.Errorf("%s\nplan (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
