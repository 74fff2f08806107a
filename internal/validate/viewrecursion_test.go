package validate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// TestViewRecursion: a view's own allowRecursion is read only where the
// view recurses; elsewhere it is a warning at the view's field.
func TestViewRecursion(t *testing.T) {
	yes, no := true, false
	cases := map[string]struct {
		reason string
		mode   v1alpha1.ClusterMode
		rec    *bool
		want   []string
	}{
		"ResolverView":               {"A resolver's view recurses unless it says not.", v1alpha1.ModeResolver, nil, nil},
		"ResolverViewWithout":        {"A resolver's view with recursion: false reads no allowRecursion.", v1alpha1.ModeResolver, &no, []string{"spec.allowRecursion"}},
		"AuthoritativeView":          {"An authoritative cluster's view recurses only with recursion: true.", v1alpha1.ModeAuthoritative, nil, []string{"spec.allowRecursion"}},
		"AuthoritativeRecursiveView": {"An authoritative cluster's recursive view reads its own list.", v1alpha1.ModeAuthoritative, &yes, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &model.Cluster{Spec: v1alpha1.BindClusterSpec{Mode: tc.mode}}
			c.Views = []*model.View{{Name: "guest", Recursion: tc.rec, AllowRecursion: []string{"192.0.2.0/24"}}}
			var rs diag.Results
			viewRecursion(c, &rs)
			var got []string
			for _, r := range rs {
				if r.Severity == diag.Warning {
					got = append(got, r.Field)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s\n(-want +got):\n%s", tc.reason, d)
			}
		})
	}
}
