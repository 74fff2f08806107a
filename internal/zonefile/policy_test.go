package zonefile

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

var policySrc = diag.Source{Ref: diag.ObjectRef{APIVersion: "bind.unkin.net/v1alpha1", Kind: "BindPolicy", Namespace: "dns", Name: "block"}, File: "policy.yaml"}

const thePolicy = "BindPolicy dns/block"

func policy(zone string, rules []v1alpha1.PolicyRule, records ...v1alpha1.Record) *model.Policy {
	return &model.Policy{Src: policySrc, ZoneName: zone, Spec: v1alpha1.BindPolicySpec{ZoneName: zone, Rules: rules, Records: records}}
}

func TestPolicyGolden(t *testing.T) {
	cases := map[string]struct {
		reason string
		policy *model.Policy
	}{
		"rpz": {
			reason: "Every action, a wildcard trigger, a redirect and raw records render as BIND's RPZ encoding.",
			policy: policy("rpz.local.", []v1alpha1.PolicyRule{
				{Name: "ads.example.com"},
				{Name: "*.ads.example.com", Action: v1alpha1.ActionNXDOMAIN},
				{Name: "tracker.example.net.", Action: v1alpha1.ActionNODATA},
				{Name: "ok.example.com", Action: v1alpha1.ActionPassthru},
				{Name: "evil.example.org", Action: v1alpha1.ActionDrop},
				{Name: "big.example.org", Action: v1alpha1.ActionTCPOnly},
				{Name: "Search.Example.com", Action: v1alpha1.ActionRedirect, Target: "safe.example.com"},
				{Name: "bücher.example", Action: v1alpha1.ActionRedirect, Target: "books.example.com."},
			},
				v1alpha1.Record{Name: "garden.example.com", Type: "A", Values: []string{"192.0.2.1"}},
				v1alpha1.Record{Name: "32.1.2.0.192.rpz-ip", Type: "CNAME", Values: []string{"."}},
				v1alpha1.Record{Name: "walled.example.com", Type: "TXT", TTL: i32(5), Values: []string{`"blocked; ask IT"`}},
			),
		},
		"rpz-empty": {
			reason: "A policy without rules is SOA and NS only.",
			policy: policy("empty.rpz.", nil),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			z, rs := Policy(tc.policy)
			if len(rs) > 0 {
				t.Fatalf("%s\nPolicy: unexpected results: %v", tc.reason, rs)
			}
			text := z.Text(NextSerial(nil, z.Hash, nil))
			golden.Check(t, filepath.Join("testdata", name, "db.zone"), text)
			checkZone(t, z.Origin, text)
			roundTrip(t, z, 9)
		})
	}
}

func TestPolicyErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		policy *model.Policy
		want   []located
	}{
		"RedirectWithoutTarget": {
			reason: "A redirect needs somewhere to go.",
			policy: policy("rpz.local.", []v1alpha1.PolicyRule{{Name: "a.example", Action: v1alpha1.ActionRedirect}}),
			want:   []located{{diag.Error, thePolicy, "spec.rules[0].target", "needs a target"}},
		},
		"TargetWithoutRedirect": {
			reason: "A target on another action would be ignored silently.",
			policy: policy("rpz.local.", []v1alpha1.PolicyRule{{Name: "a.example", Target: "b.example"}}),
			want:   []located{{diag.Error, thePolicy, "spec.rules[0].target", "only by action redirect"}},
		},
		"BadTarget": {
			reason: "The target is a domain name.",
			policy: policy("rpz.local.", []v1alpha1.PolicyRule{{Name: "a.example", Action: v1alpha1.ActionRedirect, Target: "b example"}}),
			want:   []located{{diag.Error, thePolicy, "spec.rules[0].target", "cannot use redirect target"}},
		},
		"UnknownAction": {
			reason: "Unknown actions are refused.",
			policy: policy("rpz.local.", []v1alpha1.PolicyRule{{Name: "a.example", Action: "block"}}),
			want:   []located{{diag.Error, thePolicy, "spec.rules[0].action", "unknown action"}},
		},
		"BadName": {
			reason: "The trigger is a domain name.",
			policy: policy("rpz.local.", []v1alpha1.PolicyRule{{Name: "ok.example"}, {Name: "a;b.example"}}),
			want:   []located{{diag.Error, thePolicy, "spec.rules[1].name", "cannot use trigger name"}},
		},
		"TooLong": {
			reason: "Trigger plus policy zone must fit in 255 octets.",
			policy: policy("rpz.local.", []v1alpha1.PolicyRule{{Name: strings.Repeat("abcdefghi.", 24) + "commercial"}}),
			want:   []located{{diag.Error, thePolicy, "spec.rules[0].name", "at most 255"}},
		},
		"DuplicateRule": {
			reason: "Two rules for one name conflict; the second is reported.",
			policy: policy("rpz.local.", []v1alpha1.PolicyRule{{Name: "a.example"}, {Name: "A.example.", Action: v1alpha1.ActionDrop}}),
			want:   []located{{diag.Error, thePolicy, "spec.rules[1]", "already defined by BindPolicy dns/block spec.rules[0]"}},
		},
		"RuleAndRecord": {
			reason: "A rule is a CNAME, which cannot share its name with a raw record.",
			policy: policy("rpz.local.", []v1alpha1.PolicyRule{{Name: "a.example"}}, v1alpha1.Record{Name: "a.example", Type: "A", Values: []string{"192.0.2.1"}}),
			want:   []located{{diag.Error, thePolicy, "spec.rules[0].name", "spec.records[0] defines A"}},
		},
		"BadRecord": {
			reason: "Raw records are checked like zone records.",
			policy: policy("rpz.local.", nil, v1alpha1.Record{Name: "x", Type: "A", Values: []string{"nope"}}),
			want:   []located{{diag.Error, thePolicy, "spec.records[0].values[0]", "cannot parse value for type A"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, rs := Policy(tc.policy)
			says := make([]string, len(tc.want))
			for i, w := range tc.want {
				says[i] = w.Says
			}
			if diff := cmp.Diff(tc.want, locate(rs, says)); diff != "" {
				t.Errorf("%s\nPolicy results: -want +got\n%s", tc.reason, diff)
			}
		})
	}
}
