package importer_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestCarried: settings import once dropped or widened are carried as
// BIND applies them, with nothing reported lost.
func TestCarried(t *testing.T) {
	const soa = "$TTL 60\n@ SOA ns1 h. 1 3600 600 1209600 300\n@ NS ns1\n@ NS ns2\nns1 A 192.0.2.1\nns2 A 192.0.2.2\n"
	type got struct {
		Mode           v1alpha1.ClusterMode
		AllowRecursion []string
		Forwarders     []string
		ForwardOnly    bool
		AlsoNotify     []string
		Policies       []string
		// ViewRecursion is each view's own allowRecursion (view: list).
		ViewRecursion map[string][]string
		// Feeds are the zones with responsePolicy.
		Feeds []string
	}
	cases := map[string]struct {
		reason string
		conf   string
		want   got
		// lost are losses the case expects (substrings), all others fail.
		lost []string
	}{
		"ViewForwarders": {
			reason: "The one recursive view's forwarders and allow-recursion become the cluster's, which every view inherits.",
			conf:   "view a {\n\tmatch-clients { 10.0.0.0/8; };\n\trecursion yes;\n\tallow-recursion { 10.0.0.0/8; };\n\tforwarders { 192.0.2.53; };\n\tforward only;\n};\nview b {\n\trecursion no;\n\tzone \"z.example\" { type primary; file \"z.db\"; notify explicit; };\n};\n",
			want:   got{Mode: v1alpha1.ModeResolver, AllowRecursion: []string{"10.0.0.0/8"}, Forwarders: []string{"192.0.2.53"}, ForwardOnly: true},
		},
		"ViewsDifferInAllowRecursion": {
			reason: "Two recursive views that allow different clients: the cluster takes the first's, the second keeps its own in BindView spec.allowRecursion (never widened).",
			conf:   "acl lan { 10.0.0.0/8; };\nview a {\n\tmatch-clients { lan; };\n\trecursion yes;\n\tallow-recursion { lan; };\n};\nview b {\n\trecursion yes;\n\tallow-recursion { 192.0.2.0/24; };\n};\nview c {\n\trecursion yes;\n};\n",
			want: got{Mode: v1alpha1.ModeResolver, AllowRecursion: []string{"lan"},
				ViewRecursion: map[string][]string{"b": {"192.0.2.0/24"}, "c": {"localnets", "localhost"}}},
		},
		"SecondaryRPZ": {
			reason: "A response-policy feed (a secondary RPZ) stays in response-policy: BindZone spec.responsePolicy (it once dropped out, so blocked names resolved again).",
			conf:   "options {\n\trecursion yes;\n\tallow-recursion { 10.0.0.0/8; };\n\tresponse-policy { zone \"feed.rpz\"; };\n};\nzone \"feed.rpz\" {\n\ttype secondary;\n\tprimaries { 192.0.2.9; };\n\tnotify no;\n};\n",
			want:   got{Mode: v1alpha1.ModeResolver, AllowRecursion: []string{"10.0.0.0/8"}, Feeds: []string{"feed.rpz"}},
		},
		"AllowRecursionFromAllowQuery": {
			reason: "Without allow-recursion BIND allows recursion to allow-query's clients, not to localnets.",
			conf:   "options {\n\trecursion yes;\n\tallow-query { 10.0.0.0/8; };\n};\nzone \"z.example\" { type primary; file \"z.db\"; notify explicit; };\n",
			want:   got{Mode: v1alpha1.ModeResolver, AllowRecursion: []string{"10.0.0.0/8"}},
		},
		"NotifyYes": {
			reason: "notify yes (the default) NOTIFYs the NS set but the MNAME: ns2's address joins alsoNotify.",
			conf:   "options { recursion no; };\nzone \"z.example\" { type primary; file \"z.db\"; also-notify { 192.0.2.99; }; };\n",
			want:   got{Mode: v1alpha1.ModeAuthoritative, AlsoNotify: []string{"192.0.2.99", "192.0.2.2"}},
		},
		"OptionsAlsoNotify": {
			reason: "A zone without its own also-notify inherits options' (a named list expanded); it was refused in extraOptions.",
			conf:   "masters downstream { 192.0.2.61; };\noptions { recursion no; notify explicit; also-notify { downstream; 192.0.2.62; }; };\nzone \"z.example\" { type primary; file \"z.db\"; };\n",
			want:   got{Mode: v1alpha1.ModeAuthoritative, AlsoNotify: []string{"192.0.2.61", "192.0.2.62"}},
		},
		"DefaultPolicy": {
			reason: "dnssec-policy default (BIND's built-in) becomes an equal BindDNSSECPolicy; the keys are another matter (a loss here: none to read).",
			conf:   "options { recursion no; };\nzone \"z.example\" { type primary; file \"z.db\"; notify explicit; dnssec-policy default; };\n",
			want:   got{Mode: v1alpha1.ModeAuthoritative, Policies: []string{"imported-default"}},
			lost:   []string{"the DNSSEC keys of zone z.example are not read", "the signed serial of zone z.example is not read"},
		},
		"NotifyNo": {
			reason: "notify no sends nothing, not even to also-notify.",
			conf:   "options { recursion no; notify no; };\nzone \"z.example\" { type primary; file \"z.db\"; also-notify { 192.0.2.99; }; };\n",
			want:   got{Mode: v1alpha1.ModeAuthoritative},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"/c/named.conf": tc.conf, "/c/z.db": soa}
			read := func(p string) ([]byte, error) {
				if s, ok := files[p]; ok {
					return []byte(s), nil
				}
				return nil, fmt.Errorf("open %s: no such file", p)
			}
			conf, err := namedconf.ReadConf("/c/named.conf", "/c", read)
			if err != nil {
				t.Fatal(err)
			}
			res, err := importer.Import(conf, importer.Options{ZoneDir: "/c", Read: read})
			if err != nil {
				t.Fatal(err)
			}
			if rs, err := res.Check(&testutil.DetRand{}); err != nil || rs.HasErrors() {
				t.Fatalf("the import does not render: %v %v", err, rs)
			}
		losses:
			for _, l := range res.Losses {
				for _, want := range tc.lost {
					if strings.Contains(l.String(), want) {
						continue losses
					}
				}
				t.Errorf("%s\nreported lost: %s", tc.reason, l)
			}
			sp := res.Objects["cluster.yaml"][0].(*v1alpha1.BindCluster).Spec
			g := got{Mode: sp.Mode, AllowRecursion: sp.AllowRecursion, Forwarders: sp.Forwarders, ForwardOnly: sp.ForwardOnly}
			for _, o := range res.Objects["views.yaml"] {
				if v := o.(*v1alpha1.BindView); len(v.Spec.AllowRecursion) > 0 {
					if g.ViewRecursion == nil {
						g.ViewRecursion = map[string][]string{}
					}
					g.ViewRecursion[v.Name] = v.Spec.AllowRecursion
				}
			}
			for _, o := range res.Objects["zones.yaml"] {
				if z := o.(*v1alpha1.BindZone); z.Spec.ResponsePolicy {
					g.Feeds = append(g.Feeds, z.Spec.ZoneName)
				}
				g.AlsoNotify = append(g.AlsoNotify, o.(*v1alpha1.BindZone).Spec.AlsoNotify...)
				if p := o.(*v1alpha1.BindZone).Spec.DNSSECPolicyRef; p != "" {
					g.Policies = append(g.Policies, p)
				}
			}
			if d := cmp.Diff(tc.want, g); d != "" {
				t.Errorf("%s\n(-want +got):\n%s", tc.reason, d)
			}
		})
	}
}
