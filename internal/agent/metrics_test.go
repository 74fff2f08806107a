package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStateMetrics: the series the alert rules name a zone or a file by
// (docs/monitoring.md) follow the status.
func TestStateMetrics(t *testing.T) {
	cases := map[string]struct {
		reason      string
		role        Role
		status      func(*Status)
		configError bool
		want        []string
	}{
		"Healthy": {
			reason: "a ready pod has its info series and nothing else",
			role:   RolePrimary, status: func(s *Status) { s.Ready = true },
			want: []string{`bindfn_agent_info{role="primary",version="dev"} 1`},
		},
		"Unready": {
			reason: "each zone /status lists as unready is a series, a zone in a view as zone/view",
			role:   RoleSecondary, status: func(s *Status) { s.Unready = []string{"b.test", "a.test/internal"} },
			want: []string{
				`bindfn_agent_info{role="secondary",version="dev"} 1`,
				`bindfn_agent_zone_unready{zone="a.test/internal"} 1`,
				`bindfn_agent_zone_unready{zone="b.test"} 1`,
			},
		},
		"ConfigError": {
			reason: "a rejected config carries the file and line named-checkconf reported",
			role:   RolePrimary, configError: true,
			status: func(s *Status) {
				s.LastError = &ErrorStatus{Message: "unknown option 'bogus'", File: "/etc/bind/named.conf", Line: 12}
			},
			want: []string{
				`bindfn_agent_config_error_info{file="/etc/bind/named.conf",line="12"} 1`,
				`bindfn_agent_info{role="primary",version="dev"} 1`,
			},
		},
		"ErrorApplied": {
			reason: "the last error of a change that was applied since is no alert",
			role:   RolePrimary,
			status: func(s *Status) { s.LastError = &ErrorStatus{Message: "old", File: "/x", Line: 1} },
			want:   []string{`bindfn_agent_info{role="primary",version="dev"} 1`},
		},
		"Unlocated": {
			reason: "an error without a location (rndc failed) has empty file and line",
			role:   RolePrimary, configError: true,
			status: func(s *Status) { s.LastError = &ErrorStatus{Message: "rndc: connection refused"} },
			want: []string{
				`bindfn_agent_config_error_info{file="",line=""} 1`,
				`bindfn_agent_info{role="primary",version="dev"} 1`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := NewState(tc.role, 0)
			s.Update(tc.status)
			if tc.configError {
				s.Metrics().ConfigError.Set(1)
			}
			var w strings.Builder
			s.WriteMetrics(&w)
			checkExposition(t, w.String())
			var got []string
			for _, line := range strings.Split(w.String(), "\n") {
				for _, fam := range []string{"bindfn_agent_info{", "bindfn_agent_zone_unready{", "bindfn_agent_config_error_info{"} {
					if strings.HasPrefix(line, fam) {
						got = append(got, line)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
