package render_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestRecursiveViewAllowRecursion: a view with recursion: true on an
// authoritative cluster recurses for spec.allowRecursion (BIND's default
// localnets and localhost when unset), never for every client it matches
// (an open resolver: it once rendered allow-recursion { any; }).
func TestRecursiveViewAllowRecursion(t *testing.T) {
	for name, tc := range map[string]struct {
		reason  string
		cluster string
		want    []string // the allow-recursion of view "office"
	}{
		"unset": {
			reason:  "no spec.allowRecursion: closed, BIND's default",
			cluster: "spec: {replicas: 2}",
			want:    []string{"localnets", "localhost"},
		},
		"acl": {
			reason:  "spec.allowRecursion names the office ACL",
			cluster: "spec: {replicas: 2, allowRecursion: [office]}",
			want:    []string{`"office"`},
		},
		"matched-any": {
			reason:  "the view matches any client; recursion is still only for the list",
			cluster: "spec: {replicas: 2, allowRecursion: [192.0.2.0/24, '!192.0.2.9']}",
			want:    []string{"192.0.2.0/24", "!192.0.2.9"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := testutil.Lines(
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindCluster", "metadata: {name: auth, namespace: dns}", tc.cluster, "---",
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindACL", "metadata: {name: office, namespace: dns}", "spec: {addresses: [192.0.2.0/24]}", "---",
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindView", "metadata: {name: office, namespace: dns}", "spec: {clusterRef: auth, order: 1, recursion: true}", "---",
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindView", "metadata: {name: world, namespace: dns}", "spec: {clusterRef: auth, order: 2}", "---",
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindZone", "metadata: {name: a, namespace: dns}",
				"spec: {clusterRef: auth, viewRef: office, zoneName: a.example, nameservers: [ns1.example.net.]}",
			)
			items, err := testutil.DecodeItems("in.yaml", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			fs := files(t, run(t, items, nil))
			for _, role := range []string{"primary", "secondary"} {
				conf := string(fs["rendered/auth/auth-config/named.conf."+role])
				if conf == "" {
					t.Fatalf("no named.conf.%s among %d files", role, len(fs))
				}
				view := conf[strings.Index(conf, `view "office"`):strings.Index(conf, `view "world"`)]
				m := regexp.MustCompile(`allow-recursion \{([^}]*)\};`).FindStringSubmatch(view)
				if m == nil {
					t.Fatalf("%s: view office has no allow-recursion:\n%s", tc.reason, view)
				}
				var got []string
				for _, e := range strings.Split(m[1], ";") {
					if e = strings.TrimSpace(e); e != "" {
						got = append(got, e)
					}
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s: named.conf.%s view office allow-recursion (-want +got):\n%s", tc.reason, role, diff)
				}
			}
		})
	}
}
