package monitoring

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// grafanaSchema decodes a dashboard strictly with Grafana's Foundation SDK
// (Go types generated from Grafana's own dashboard and panel schemas): a
// field Grafana does not know, a value of the wrong type, or a required
// field missing is an error; then the SDK's Validate.
func grafanaSchema(b []byte) error {
	plugins.RegisterDefaultPlugins()
	//lint:ignore SA1019 the dashboard is the classic JSON model (schemaVersion 39) that Grafana's sidecar provisions; dashboardv2 is the newer resource format
	var d dashboard.Dashboard
	err := d.UnmarshalJSONStrict(b)
	// v0.0.22 returns its error list even when it is empty.
	if be := (cog.BuildErrors)(nil); errors.As(err, &be) && len(be) == 0 {
		err = nil
	}
	if err != nil {
		return err
	}
	return d.Validate()
}

// TestDashboardSchema: the rendered dashboard is Grafana's schema, and
// the check catches what it must (so it is not passing vacuously).
func TestDashboardSchema(t *testing.T) {
	b, err := Dashboard(lab)
	if err != nil {
		t.Fatal(err)
	}
	if err := grafanaSchema(b); err != nil {
		t.Errorf("the dashboard is not Grafana's schema:\n%v", err)
	}
	cases := map[string]struct {
		reason string
		edit   func(d map[string]any)
		want   string
	}{
		"UnknownPanelField": {reason: "a misspelt panel field", edit: func(d map[string]any) {
			d["panels"].([]any)[0].(map[string]any)["titel"] = "x"
		}, want: "unexpected field 'titel'"},
		"WrongType": {reason: "schemaVersion as a string", edit: func(d map[string]any) { d["schemaVersion"] = "39" }, want: "schemaVersion"},
		"Missing":   {reason: "the annotations container is required", edit: func(d map[string]any) { delete(d, "annotations") }, want: "annotations: required field is missing"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			tc.edit(d)
			bad, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if err := grafanaSchema(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want an error with %q", tc.reason, err, tc.want)
			}
		})
	}
}
