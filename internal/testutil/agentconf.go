package testutil

import (
	"encoding/json"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// AgentConfig decodes the cluster's rendered agent.json.
func AgentConfig(t testing.TB, c *Cluster) layout.AgentConfigDoc {
	t.Helper()
	cm := c.ConfigMaps[layout.ConfigMapName(c.Name)]
	if cm == nil {
		t.Fatalf("cluster %q has no config ConfigMap", c.Name)
	}
	var doc layout.AgentConfigDoc
	if err := json.Unmarshal([]byte(cm.Data[layout.AgentConfig]), &doc); err != nil {
		t.Fatalf("agent.json: %v", err)
	}
	return doc
}
