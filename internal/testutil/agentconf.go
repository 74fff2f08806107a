package testutil

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// AgentConfig decodes the cluster's rendered agent.json with the zones of
// every shard it lists (zoneDocs) appended, as the agent reads it.
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
	for _, p := range doc.ZoneDocs {
		var d layout.ZonesDoc
		if err := json.Unmarshal([]byte(c.PodFile(t, p)), &d); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		doc.AddZones(d)
	}
	return doc
}

// PodFile is the content of the file at path in the pod that one of the
// cluster's zones ConfigMaps holds (layout.ZoneFile).
func (c *Cluster) PodFile(t testing.TB, path string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(path, layout.ZonesDir+"/")
	shard, key, ok2 := strings.Cut(rest, "/")
	n, err := strconv.Atoi(shard)
	if !ok || !ok2 || err != nil {
		t.Fatalf("%s is not a file of a zones ConfigMap", path)
	}
	cm := c.ConfigMaps[layout.ZonesConfigMapName(c.Name, n)]
	if cm == nil {
		t.Fatalf("%s: cluster %q has no zones ConfigMap %d", path, c.Name, n)
	}
	v, ok := cm.Data[key]
	if !ok {
		t.Fatalf("%s: not in zones ConfigMap %d", path, n)
	}
	return v
}

// zonesInclude is an include of a zones ConfigMap's file in named.conf.
var zonesInclude = regexp.MustCompile(`include "(` + regexp.QuoteMeta(layout.ZonesDir) + `/[^"]+)";`)

// NamedConf is the cluster's rendered named.conf file (layout.NamedConfPrimary
// or layout.NamedConfSecondary) with every include of a zones ConfigMap's
// file (the zone statements of a shard) replaced by that file.
func (c *Cluster) NamedConf(t testing.TB, file string) string {
	t.Helper()
	cm := c.ConfigMaps[layout.ConfigMapName(c.Name)]
	if cm == nil {
		t.Fatalf("cluster %q has no config ConfigMap", c.Name)
	}
	return zonesInclude.ReplaceAllStringFunc(cm.Data[file], func(m string) string {
		return c.PodFile(t, zonesInclude.FindStringSubmatch(m)[1])
	})
}
