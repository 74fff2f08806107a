package validate_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// hostileValues are appended to a field's good value.
var hostileValues = []string{`"`, `{`, `}`, `;`, "\n", "\x00", `//`, `#`, `/*`, `\`, `"; }; include "/etc/passwd`}

// hostileFields are every user string field of testdata/hostile/base.yaml
// that reaches a named.conf or a zone file: kind/name and the field path.
var hostileFields = []struct{ obj, path string }{
	{"BindCluster/auth", "spec.extraOptions[0]"},
	{"BindCluster/auth", "spec.allowQuery[0]"},
	{"BindCluster/auth", "spec.rateLimit.exempt[0]"},
	{"BindCluster/auth", "spec.mode"},
	{"BindCluster/res", "spec.allowRecursion[0]"},
	{"BindCluster/res", "spec.forwarders[0]"},
	{"BindCluster/res", "spec.dnssecValidation"},
	{"BindView/inside", "spec.viewName"},
	{"BindView/inside", "spec.matchClients[0]"},
	{"BindView/inside", "spec.matchClients[1]"},
	{"BindView/inside", "spec.matchDestinations[0]"},
	{"BindACL/office", "spec.aclName"},
	{"BindACL/office", "spec.addresses[0]"},
	{"BindTSIGKey/client", "spec.keyName"},
	{"BindTSIGKey/client", "spec.algorithm"},
	{"BindTSIGKey/client", "spec.secretName"},
	{"BindCatalogZone/cat", "spec.zoneName"},
	{"BindCatalogZone/cat", "spec.defaultPrimaries[0]"},
	{"BindCatalogZone/cat", "spec.transferKeyRef"},
	{"BindZone/zone", "spec.zoneName"},
	{"BindZone/zone", "spec.viewRef"},
	{"BindZone/zone", "spec.soa.primaryNS"},
	{"BindZone/zone", "spec.soa.email"},
	{"BindZone/zone", "spec.nameservers[0]"},
	{"BindZone/zone", "spec.records[0].name"},
	{"BindZone/zone", "spec.records[0].type"},
	{"BindZone/zone", "spec.records[0].values[0]"},
	{"BindZone/zone", "spec.records[1].values[0]"},
	{"BindZone/zone", "spec.allowTransfer[0]"},
	{"BindZone/zone", "spec.alsoNotify[0]"},
	{"BindZone/zone", "spec.allowQuery[0]"},
	{"BindZone/zone", "spec.updateKeyRef"},
	{"BindZone/zone", "spec.dnssecPolicyRef"},
	{"DNSRecord/rec", "spec.name"},
	{"DNSRecord/rec", "spec.type"},
	{"DNSRecord/rec", "spec.values[0]"},
	{"DNSRecord/rec", "spec.zoneRef"},
	{"BindZone/sec", "spec.zoneName"},
	{"BindZone/sec", "spec.primaries[0]"},
	{"BindZone/sec", "spec.transferKeyRef"},
	{"BindZone/fwd", "spec.zoneName"},
	{"BindZone/fwd", "spec.forwarders[0]"},
	{"BindPolicy/rpz", "spec.zoneName"},
	{"BindPolicy/rpz", "spec.rules[0].name"},
	{"BindPolicy/rpz", "spec.rules[0].action"},
	{"BindPolicy/rpz", "spec.rules[0].target"},
	{"BindDNSSECPolicy/std", "spec.policyName"},
	{"BindDNSSECPolicy/std", "spec.keys[0].role"},
	{"BindDNSSECPolicy/std", "spec.keys[0].algorithm"},
	{"BindDNSSECPolicy/std", "spec.keys[0].lifetime"},
	{"BindDNSSECPolicy/std", "spec.dnskeyTTL"},
	{"BindDNSSECPolicy/std", "spec.maxZoneTTL"},
	{"BindDNSSECPolicy/std", "spec.signaturesRefresh"},
	{"BindDNSSECPolicy/std", "spec.signaturesValidity"},
	{"BindDNSSECPolicy/std", "spec.signaturesValidityDNSKEY"},
	{"BindDNSSECPolicy/std", "spec.publishSafety"},
	{"BindDNSSECPolicy/std", "spec.retireSafety"},
	{"BindDNSSECPolicy/std", "spec.purgeKeys"},
	{"BindDNSSECPolicy/std", "spec.zonePropagationDelay"},
	{"BindDNSSECPolicy/std", "spec.parentDSTTL"},
	{"BindDNSSECPolicy/std", "spec.parentPropagationDelay"},
}

// TestHostileStrings: for every string field that reaches BIND and every
// hostile value, the input is either rejected with a located error naming
// that field, or it renders, named-checkconf -z accepts it, and
// named-checkconf -p prints the same statements as for the clean input.
func TestHostileStrings(t *testing.T) {
	bindtools.RequireBIND(t)
	base := testutil.ReadItems(t, "testdata/hostile")
	want := checkconfSkeletons(t, base)
	accepted := 0
	for _, hf := range hostileFields {
		for _, h := range hostileValues {
			t.Run(hf.obj+"/"+hf.path+"/"+strconv.Quote(h), func(t *testing.T) {
				items := inject(t, base, hf.obj, hf.path, h)
				objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
				if rs.HasErrors() {
					kind, name, _ := strings.Cut(hf.obj, "/")
					for _, r := range rs {
						if r.Severity == diag.Error && r.Source.Ref.Kind == kind && r.Source.Ref.Name == name && strings.HasPrefix(r.Field, hf.path) {
							return // rejected, located
						}
					}
					t.Fatalf("rejected, but no error names %s %s:\n%s", hf.obj, hf.path, join(rs))
				}
				accepted++
				got := skeletonsOf(t, objs)
				for k, w := range want {
					if got[k] != w {
						t.Errorf("%s: named-checkconf -p shows other statements than for the clean input:\n--- clean\n%s\n--- hostile\n%s", k, w, got[k])
					}
				}
			})
		}
	}
	t.Logf("%d hostile values accepted and rendered safely, the rest rejected with located errors", accepted)
}

func join(rs diag.Results) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func checkconfSkeletons(t *testing.T, items []model.Item) map[string]string {
	t.Helper()
	objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		t.Fatalf("the clean hostile base does not render:\n%s", join(rs))
	}
	return skeletonsOf(t, objs)
}

var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// skeletonsOf lays out every cluster's pod, runs named-checkconf -z (zones
// loaded) and -p on both roles, and returns the printed config with quoted
// strings blanked: the statements and their structure.
func skeletonsOf(t *testing.T, objs []render.Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for cname, c := range testutil.Clusters(t, objs) {
		root := t.TempDir()
		testutil.LayPod(t, root, c)
		for _, f := range []string{layout.NamedConfPrimary, layout.NamedConfSecondary} {
			if o, err := bindtools.NamedCheckconf(t, root, layout.ConfigFile(f)); err != nil {
				t.Fatalf("%s %s: named-checkconf -z: %v\n%s", cname, f, err, o)
			}
			cmd := exec.Command(bindtools.BINDPath(t, "named-checkconf"), "-p", "-t", root, layout.ConfigFile(f))
			p, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s %s: named-checkconf -p: %v\n%s", cname, f, err, p)
			}
			out[cname+"/"+f] = quoted.ReplaceAllString(string(p), `""`)
		}
	}
	return out
}

// inject returns a copy of items with value+h at path of object kind/name.
func inject(t *testing.T, items []model.Item, obj, path, h string) []model.Item {
	t.Helper()
	kind, name, _ := strings.Cut(obj, "/")
	out := make([]model.Item, len(items))
	copy(out, items)
	for i, it := range items {
		if it.Source.Ref.Kind != kind || it.Source.Ref.Name != name {
			continue
		}
		var m any
		if err := json.Unmarshal(it.JSON, &m); err != nil {
			t.Fatal(err)
		}
		setPath(t, m, path, h)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i].JSON = b
		return out
	}
	t.Fatalf("no %s in the hostile base", obj)
	return nil
}

var segment = regexp.MustCompile(`^([A-Za-z]+)(?:\[(\d+)\])?$`)

// setPath appends h to the string at a path such as spec.records[0].values[1].
func setPath(t *testing.T, m any, path, h string) {
	t.Helper()
	parts := strings.Split(path, ".")
	cur := m
	for i, p := range parts {
		sm := segment.FindStringSubmatch(p)
		if sm == nil {
			t.Fatalf("bad path %q", path)
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s: not an object at %q", path, p)
		}
		last := i == len(parts)-1
		if sm[2] == "" {
			if last {
				s, _ := obj[sm[1]].(string)
				obj[sm[1]] = s + h
				return
			}
			cur = obj[sm[1]]
			continue
		}
		idx, _ := strconv.Atoi(sm[2])
		list, ok := obj[sm[1]].([]any)
		if !ok || idx >= len(list) {
			t.Fatalf("%s: no list element %s", path, p)
		}
		if last {
			s, _ := list[idx].(string)
			list[idx] = s + h
			return
		}
		cur = list[idx]
	}
}

var _ = fmt.Sprint
var _ = sort.Strings
