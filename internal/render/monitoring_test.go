package render_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestMonitoringRules: the rendered rules file passes the real promtool's
// `check rules`, and holds the same groups as the PrometheusRule's spec.
func TestMonitoringRules(t *testing.T) {
	promtool := bindtools.Prometheus(t, "promtool")
	objs := run(t, testutil.ReadItems(t, filepath.Join("testdata", "cases", "monitoring", "input")), nil)
	var file []byte
	var rule *objects.PrometheusRule
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *corev1.ConfigMap:
			if v.Name == layout.RulesConfigMapName("watched") {
				file = []byte(v.Data[layout.RulesFile])
			}
		case *objects.PrometheusRule:
			rule = v
		}
	}
	if file == nil || rule == nil {
		t.Fatalf("the render made no rules file (%v) or no PrometheusRule (%v)", file != nil, rule != nil)
	}
	spec, err := yaml.Marshal(rule.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(spec), string(file)); diff != "" {
		t.Errorf("the rules file is not the PrometheusRule's groups (-rule +file):\n%s", diff)
	}
	path := filepath.Join(t.TempDir(), layout.RulesFile)
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules on the rendered file: %v\n%s", err, out)
	}
	t.Logf("promtool check rules:\n%s", out)
}
