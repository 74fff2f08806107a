package output

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

const hash = "4f0c0000000000000000000000000000000000000000000000000000000000aa"

// zoneText is a rendered zone file's head with serial and hash.
func zoneText(origin string, serial string) string {
	return "$ORIGIN " + origin + "\n$TTL 60\n" + origin + " 60 IN SOA ns. h. " + serial + " 300 60 1209600 60" + zonefile.HashComment + hash + "\n" + origin + " 60 IN NS ns.\n"
}

func cm(name string, data map[string]string) ConfigMap {
	d := map[string][]byte{}
	for k, v := range data {
		d[k] = []byte(v)
	}
	return ConfigMap{Src: diag.Source{Ref: diag.ObjectRef{Kind: "ConfigMap", Namespace: "dns", Name: name}}, Data: d}
}

func TestRead(t *testing.T) {
	cases := map[string]struct {
		reason string
		cms    []ConfigMap
		want   map[string]map[string]Zone
		errs   []string // fields of the errors
	}{
		"zones and views": {
			reason: "each zone's state from its own file, the view from the file name, across shards; other ConfigMaps and parts skipped",
			cms: []ConfigMap{
				cm("auth-zones-0", map[string]string{"db.external_example.com": zoneText("example.com.", "7"), "db.external_big.example.part-000": "junk\n"}),
				cm("auth-zones-1", map[string]string{"catalog.external_cat.example": zoneText("cat.example.", "2"), "rpz.internal_rpz.example": zoneText("rpz.example.", "3")}),
				cm("auth-config", map[string]string{"named.conf.primary": "options {};\n"}),
				cm("tiny-zones-0", map[string]string{"db.a_2fb.example": zoneText("a/b.example.", "1")}),
			},
			want: map[string]map[string]Zone{
				"dns/auth": {
					"db.external_example.com":      {Origin: "example.com.", View: "external", State: zonefile.State{Serial: 7, Hash: hash}},
					"catalog.external_cat.example": {Origin: "cat.example.", View: "external", State: zonefile.State{Serial: 2, Hash: hash}},
					"rpz.internal_rpz.example":     {Origin: "rpz.example.", View: "internal", State: zonefile.State{Serial: 3, Hash: hash}},
				},
				"dns/tiny": {"db.a_2fb.example": {Origin: "a/b.example.", State: zonefile.State{Serial: 1, Hash: hash}}},
			},
		},
		"tombstone": {
			reason: "a removed zone's tombstone gives its last state, Removed",
			cms: []ConfigMap{cm("auth-zones-0", map[string]string{
				"removed.db.gone.example": TombstoneText("gone.example.", zonefile.State{Serial: 9, Hash: hash}),
			})},
			want: map[string]map[string]Zone{"dns/auth": {"db.gone.example": {Origin: "gone.example.", State: zonefile.State{Serial: 9, Hash: hash}, Removed: true}}},
		},
		"unreadable": {
			reason: "one failure rule: a file or tombstone that does not read is an error at its key, and that zone has no state",
			cms: []ConfigMap{cm("auth-zones-0", map[string]string{
				"db.ok.example":          zoneText("ok.example.", "4"),
				"db.broken.example":      "$ORIGIN broken.example.\n$TTL 60\n",
				"db.other.example":       zoneText("wrong.example.", "4"),
				"removed.db.old.example": "{\"zone\":\"old.example.\"}\n",
			})},
			want: map[string]map[string]Zone{"dns/auth": {"db.ok.example": {Origin: "ok.example.", State: zonefile.State{Serial: 4, Hash: hash}}}},
			errs: []string{"data[db.broken.example]", "data[db.other.example]", "data[removed.db.old.example]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, rs := Read(tc.cms)
			if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Zone{}, "Src"), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, d)
			}
			var errs []string
			for _, r := range rs {
				if r.Severity != diag.Error || r.Source.Ref.Name != "auth-zones-0" || !strings.Contains(r.Message, "restore the key") {
					t.Errorf("%s: result %v is not a located error that says what to do", tc.reason, r)
				}
				errs = append(errs, r.Field)
			}
			if d := cmp.Diff(tc.errs, errs, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s: errors (-want +got):\n%s", tc.reason, d)
			}
		})
	}
}

func TestLegacy(t *testing.T) {
	raw := `{"example.com":{"Serial":5,"Hash":"h1"},"0/25.2.0.192.in-addr.arpa":{"Serial":2,"Hash":"h2"},"internal/example.com":{"Serial":3,"Hash":"h3"}}`
	noViews := Legacy(raw, nil)
	if z := noViews["db.0_2f25.2.0.192.in-addr.arpa"]; z.Serial != 2 || z.View != "" || !z.Removed {
		t.Errorf("without views a \"/\" is part of the zone name: %+v (all: %v)", z, noViews)
	}
	views := Legacy(raw, []string{"internal"})
	if z := views["db.internal_example.com"]; z.Serial != 3 || z.View != "internal" || z.Origin != "example.com." {
		t.Errorf("a view's zone: %+v (all: %v)", z, views)
	}
	if Legacy("not json", nil) != nil {
		t.Error("an unreadable annotation gives nothing")
	}
}

func TestShardOf(t *testing.T) {
	for name, want := range map[string]struct {
		cluster string
		shard   int
		ok      bool
	}{
		"auth-zones-0":       {"auth", 0, true},
		"a-zones-1-zones-12": {"a-zones-1", 12, true},
		"auth-config":        {},
		"auth-zones-01":      {},
		"auth-zones-":        {},
		"-zones-1":           {},
		"auth-zones-1x":      {},
	} {
		c, n, ok := ShardOf(name)
		if c != want.cluster || n != want.shard || ok != want.ok {
			t.Errorf("ShardOf(%q) = %q, %d, %v; want %q, %d, %v", name, c, n, ok, want.cluster, want.shard, want.ok)
		}
	}
}
