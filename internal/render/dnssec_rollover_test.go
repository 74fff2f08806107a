package render_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

// rolled is the parent fixture with the child zone's spec.dnssecRollover
// set to roll (nil: none).
func rolled(t *testing.T, roll map[string]any) []model.Item {
	t.Helper()
	return testutil.EditItem(t, parentFixture(t), "BindZone", "child-parent-example", func(obj map[string]any) {
		if roll != nil {
			obj["spec"].(map[string]any)["dnssecRollover"] = roll
		}
	})
}

func ksk(label string, done bool) map[string]any {
	return map[string]any{"ksk": map[string]any{"label": label, "done": done}}
}

// childKeys are the child zone's keys in the rendered Secret, with the
// stage each file set says (a .state with Retired: retiring; one whose
// goal is hidden: successor).
func childKeys(t *testing.T, objs []render.Object) map[uint16]string {
	t.Helper()
	data := testutil.Clusters(t, objs)["par"].Secrets[layout.DNSSECSecretName("par")].Data
	keys, probs := dnssec.Parse(data)
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	out := map[uint16]string{}
	for _, k := range keys {
		if k.Zone() != "child.parent.example." {
			continue
		}
		st := data[k.SecretKey(dnssec.SuffixState)]
		switch {
		case bytes.Contains(st, []byte("\nGoalState: hidden")):
			out[k.Tag()] = "successor"
		case bytes.Contains(st, []byte("\nRetired: ")):
			out[k.Tag()] = "retiring " + k.Role
		default:
			out[k.Tag()] = "active " + k.Role
		}
	}
	return out
}

// parentDSTags are the key tags of the child's DS in the rendered parent.
func parentDSTags(t *testing.T, objs []render.Object) []uint16 {
	t.Helper()
	var out []uint16
	for _, s := range rrsIn(t, zoneText(t, testutil.Clusters(t, objs)["par"], "parent.example."), "child.parent.example.", dns.TypeDS) {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		if tag := rr.(*dns.DS).KeyTag; !slices.Contains(out, tag) {
			out = append(out, tag)
		}
	}
	slices.Sort(out)
	return out
}

func infoWith(rs diag.Results, field, text string) bool {
	for _, r := range rs {
		if r.Severity == diag.Info && r.Field == field && strings.Contains(r.Message, text) {
			return true
		}
	}
	return false
}

// TestDNSSECKSKRollover walks a KSK rollover through its renders, each
// from the previous one's output: start (the successor made and shipped
// unused, the old KSK retiring, both DS in the in-cluster parent), a
// render in progress that changes nothing (no new key material: noRand),
// done (the old key and its DS gone, the successor active), and a render
// after it that changes nothing.
func TestDNSSECKSKRollover(t *testing.T) {
	first, _ := mustRun(t, rolled(t, nil), nil, &testutil.DetRand{})
	before := childKeys(t, first)
	var oldKSK, zsk uint16
	for tag, st := range before {
		switch st {
		case "active ksk":
			oldKSK = tag
		case "active zsk":
			zsk = tag
		}
	}
	if oldKSK == 0 || zsk == 0 {
		t.Fatalf("the first render's child keys are %v, want an active KSK and ZSK", before)
	}

	start, rs := mustRun(t, rolled(t, ksk("2027-01", false)), previous(t, first), bytes.NewReader(bytes.Repeat([]byte{7}, 4096)))
	got := childKeys(t, start)
	var succ uint16
	for tag, st := range got {
		if st == "successor" {
			succ = tag
		}
	}
	want := map[uint16]string{oldKSK: "retiring ksk", zsk: "active zsk", succ: "successor"}
	if diff := cmp.Diff(want, got); succ == 0 || diff != "" {
		t.Fatalf("start: the Secret's child keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sortedTags(oldKSK, succ), parentDSTags(t, start)); diff != "" {
		t.Errorf("start: the parent's DS of the child, by key tag (-old and new KSK +rendered):\n%s", diff)
	}
	if !infoWith(rs, "spec.dnssecRollover.ksk", "beside the old one") {
		t.Errorf("start: no result says the new DS goes to the parent beside the old one: %v", rs)
	}

	again, _ := mustRun(t, rolled(t, ksk("2027-01", false)), previous(t, start), noRand{})
	if diff := cmp.Diff(files(t, start), files(t, again)); diff != "" {
		t.Errorf("a render in the middle of the rollover changed the output (-start +again):\n%s", diff)
	}

	done, rs := mustRun(t, rolled(t, ksk("2027-01", true)), previous(t, again), noRand{})
	if diff := cmp.Diff(map[uint16]string{succ: "active ksk", zsk: "active zsk"}, childKeys(t, done)); diff != "" {
		t.Errorf("done: the Secret's child keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sortedTags(succ), parentDSTags(t, done)); diff != "" {
		t.Errorf("done: the parent's DS of the child (-new KSK +rendered):\n%s", diff)
	}
	if !infoWith(rs, "spec.dnssecRollover.ksk.done", "removes its DS from parent zone") {
		t.Errorf("done: no result says the old DS leaves the parent: %v", rs)
	}

	// bind-fn plan shows each step with its DS lines (goldens: -update).
	golden.Check(t, "testdata/rollover/plan-start.md", planOf(t, first, start))
	golden.Check(t, "testdata/rollover/plan-done.md", planOf(t, again, done))

	after, _ := mustRun(t, rolled(t, ksk("2027-01", true)), previous(t, done), noRand{})
	if diff := cmp.Diff(files(t, done), files(t, after)); diff != "" {
		t.Errorf("a render after the rollover changed the output (-done +after):\n%s", diff)
	}
	next, _ := mustRun(t, rolled(t, ksk("2027-07", false)), previous(t, after), bytes.NewReader(bytes.Repeat([]byte{8}, 4096)))
	if got := childKeys(t, next)[succ]; got != "retiring ksk" {
		t.Errorf("a second rollover (new label) does not retire the first one's successor: %v", childKeys(t, next))
	}
}

func sortedTags(tags ...uint16) []uint16 {
	slices.Sort(tags)
	return tags
}

// TestDNSSECRolloverExternalParent: a KSK rollover of a zone whose parent
// is not in the cluster tells the user, as a result with the DS line, to
// publish the new DS beside the old one, and at done to remove the old.
func TestDNSSECRolloverExternalParent(t *testing.T) {
	in := func(roll map[string]any) []model.Item {
		items := signedInput(t, "[{role: ksk}, {role: zsk}]", "example.com")
		return testutil.EditItem(t, items, "BindZone", "z0", func(obj map[string]any) {
			if roll != nil {
				obj["spec"].(map[string]any)["dnssecRollover"] = roll
			}
		})
	}
	first, _ := mustRun(t, in(nil), nil, &testutil.DetRand{})
	start, rs := mustRun(t, in(ksk("a", false)), previous(t, first), bytes.NewReader(bytes.Repeat([]byte{7}, 4096)))
	if !infoWith(rs, "spec.dnssecRollover.ksk", "publish the new DS at the parent now") || !infoWith(rs, "spec.dnssecRollover.ksk", " IN DS ") {
		t.Errorf("start: no result with the new DS line to publish: %v", rs)
	}
	_, rs = mustRun(t, in(ksk("a", true)), previous(t, start), noRand{})
	if !infoWith(rs, "spec.dnssecRollover.ksk.done", "remove its DS from the parent now") {
		t.Errorf("done: no result with the old DS line to remove: %v", rs)
	}
}

// TestDNSSECRolloverErrors: each step a user cannot take is a located
// error, and nothing is rendered.
func TestDNSSECRolloverErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		steps  []map[string]any // rendered in turn, each from the last output
		lose   bool             // the Secret loses the child's successor before the last step
		field  string
	}{
		"done before start": {
			reason: "a rollover no render started cannot be finished",
			steps:  []map[string]any{nil, ksk("a", true)},
			field:  "spec.dnssecRollover.ksk.done",
		},
		"new label mid-roll": {
			reason: "one rollover of a role at a time",
			steps:  []map[string]any{ksk("a", false), ksk("b", false)},
			field:  "spec.dnssecRollover.ksk.label",
		},
		"dropped mid-roll": {
			reason: "named keeps rolling to a key the Secret would no longer hold",
			steps:  []map[string]any{ksk("a", false), nil},
			field:  "spec.dnssecRollover",
		},
		"resume a done one": {
			reason: "the old key is gone",
			steps:  []map[string]any{ksk("a", false), ksk("a", true), ksk("a", false)},
			field:  "spec.dnssecRollover.ksk.done",
		},
		"role not in the policy": {
			reason: "the child's policy has a KSK and a ZSK, no CSK",
			steps:  []map[string]any{{"csk": map[string]any{"label": "a"}}},
			field:  "spec.dnssecRollover.csk",
		},
		"bad label": {
			reason: "a label is a name",
			steps:  []map[string]any{{"zsk": map[string]any{"label": "a b"}}},
			field:  "spec.dnssecRollover.zsk.label",
		},
		"lost successor": {
			reason: "the Secret must hold both keys of a rollover in progress",
			steps:  []map[string]any{ksk("a", false), ksk("a", false)},
			lose:   true,
			field:  "spec.dnssecRollover.ksk",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, _ := mustRun(t, rolled(t, nil), nil, &testutil.DetRand{})
			var rs diag.Results
			for i, step := range tc.steps {
				prev := objs
				if tc.lose && i == len(tc.steps)-1 {
					prev = loseSuccessor(t, objs)
				}
				objs, rs = runRand(rolled(t, step), previous(t, prev), bytes.NewReader(bytes.Repeat([]byte{byte(i + 7)}, 4096)))
				if rs.HasErrors() && i < len(tc.steps)-1 {
					t.Fatalf("%s: step %d failed: %v", tc.reason, i, rs)
				}
			}
			if !rs.HasErrors() {
				t.Fatalf("%s: the last step rendered without an error", tc.reason)
			}
			if len(objs) != 0 {
				t.Errorf("%s: a failed render returned %d objects", tc.reason, len(objs))
			}
			var fields []string
			for _, r := range rs {
				if r.Severity == diag.Error {
					fields = append(fields, r.Field)
				}
			}
			if !slices.Contains(fields, tc.field) {
				t.Errorf("%s: errors on %v, want one on %s: %v", tc.reason, fields, tc.field, rs)
			}
		})
	}
}

// loseSuccessor drops the files of the child's keys whose .state goal is
// hidden (a rollover's successor) from the rendered Secret.
func loseSuccessor(t *testing.T, objs []render.Object) []render.Object {
	t.Helper()
	var out []render.Object
	for _, o := range objs {
		if s, ok := o.Obj.(*corev1.Secret); ok && s.Name == layout.DNSSECSecretName("par") {
			s = s.DeepCopy()
			keys, _ := dnssec.Parse(s.Data)
			for _, k := range keys {
				if bytes.Contains(s.Data[k.SecretKey(dnssec.SuffixState)], []byte("\nGoalState: hidden")) {
					delete(s.Data, k.SecretKey(dnssec.SuffixKey))
					delete(s.Data, k.SecretKey(dnssec.SuffixPrivate))
					delete(s.Data, k.SecretKey(dnssec.SuffixState))
				}
			}
			o.Obj = s
		}
		out = append(out, o)
	}
	return out
}

// planOf is bind-fn plan's markdown for the change from one render to the
// next.
func planOf(t *testing.T, before, after []render.Object) []byte {
	t.Helper()
	o, err := plan.FromRender(before)
	if err != nil {
		t.Fatal(err)
	}
	n, err := plan.FromRender(after)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compare(o, n)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(p.Markdown(plan.Limits{RRsets: 100, Zones: 10, ZoneLines: 10, Config: 100}))
}

// TestDNSSECRolloverRoles: a ZSK and a CSK rollover ship the same stages
// as a KSK's; a ZSK's needs nothing at the parent, a CSK's does.
func TestDNSSECRolloverRoles(t *testing.T) {
	cases := map[string]struct {
		reason   string
		obj      string // the BindZone rolled
		zone     string
		role     string
		parentDS bool // the result names a DS for the parent
	}{
		"zsk": {"the DS does not pin a ZSK", "child-parent-example", "child.parent.example.", "zsk", false},
		"csk": {"the parent zone's CSK: its own parent is outside the cluster", "parent-example", "parent.example.", "csk", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			edit := func(done bool) []model.Item {
				return testutil.EditItem(t, parentFixture(t), "BindZone", tc.obj, func(obj map[string]any) {
					obj["spec"].(map[string]any)["dnssecRollover"] = map[string]any{tc.role: map[string]any{"label": "r1", "done": done}}
				})
			}
			first, _ := mustRun(t, parentFixture(t), nil, &testutil.DetRand{})
			start, rs := mustRun(t, edit(false), previous(t, first), bytes.NewReader(bytes.Repeat([]byte{5}, 4096)))
			stages := map[string]int{}
			data := testutil.Clusters(t, start)["par"].Secrets[layout.DNSSECSecretName("par")].Data
			keys, _ := dnssec.Parse(data)
			for _, k := range keys {
				if k.Zone() != tc.zone || k.Role != tc.role {
					continue
				}
				st := data[k.SecretKey(dnssec.SuffixState)]
				switch {
				case bytes.Contains(st, []byte("\nRetired: ")):
					stages["retiring"]++
				case bytes.Contains(st, []byte("\nGoalState: hidden")):
					stages["successor"]++
				default:
					stages["active"]++
				}
			}
			if diff := cmp.Diff(map[string]int{"retiring": 1, "successor": 1}, stages); diff != "" {
				t.Errorf("%s: the %s keys of %s by stage (-want +got):\n%s", tc.reason, tc.role, tc.zone, diff)
			}
			field := "spec.dnssecRollover." + tc.role
			if got := infoWith(rs, field, " IN DS "); got != tc.parentDS {
				t.Errorf("%s: a result on %s names a DS: %v, want %v: %v", tc.reason, field, got, tc.parentDS, rs)
			}
			done, _ := mustRun(t, edit(true), previous(t, start), noRand{})
			keys, _ = dnssec.Parse(testutil.Clusters(t, done)["par"].Secrets[layout.DNSSECSecretName("par")].Data)
			n := 0
			for _, k := range keys {
				if k.Zone() == tc.zone && k.Role == tc.role {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s: done leaves %d %s keys of %s in the Secret, want 1", tc.reason, n, tc.role, tc.zone)
			}
		})
	}
}
