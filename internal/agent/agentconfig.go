package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// Role is which config a pod runs.
type Role string

// Roles. Pod 0 of the StatefulSet is the primary, every other pod a secondary.
const (
	RolePrimary   Role = "primary"
	RoleSecondary Role = "secondary"
)

// Ordinal returns the StatefulSet ordinal of a pod hostname: the decimal
// suffix after the last '-' ("dns-2" is 2).
func Ordinal(hostname string) (int, error) {
	i := strings.LastIndexByte(hostname, '-')
	if i < 0 || i == len(hostname)-1 {
		return 0, fmt.Errorf("cannot find the StatefulSet ordinal in hostname %q: want <name>-<ordinal>", hostname)
	}
	n, err := strconv.Atoi(hostname[i+1:])
	if err != nil || n < 0 || strings.HasPrefix(hostname[i+1:], "+") {
		return 0, fmt.Errorf("cannot find the StatefulSet ordinal in hostname %q: %q is not a non-negative number", hostname, hostname[i+1:])
	}
	return n, nil
}

// RoleOf returns the role of an ordinal.
func RoleOf(ordinal int) Role {
	if ordinal == 0 {
		return RolePrimary
	}
	return RoleSecondary
}

// LoadConfig reads and validates agent.json. Unknown fields are an error:
// an agent older than its renderer must say so rather than ignore a field.
func LoadConfig(path string) (*layout.AgentConfigDoc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read agent config: %w", err)
	}
	c, err := ParseConfig(path, b)
	if err != nil {
		return nil, err
	}
	if err := AddZoneDocs(c, os.ReadFile); err != nil {
		return nil, err
	}
	return c, nil
}

// AddZoneDocs appends to c the per-zone lists of every shard's
// agent-zones.json that c lists (zoneDocs, docs/state.md#shards), read with
// read, and validates the result.
func AddZoneDocs(c *layout.AgentConfigDoc, read func(string) ([]byte, error)) error {
	if len(c.ZoneDocs) == 0 {
		return nil
	}
	for i, p := range c.ZoneDocs {
		b, err := read(p)
		if err != nil {
			return fmt.Errorf("zoneDocs[%d]: cannot read the zones of a shard: %w", i, err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var d layout.ZonesDoc
		if err := dec.Decode(&d); err != nil {
			return fmt.Errorf("zoneDocs[%d]: cannot parse %s: %w", i, p, err)
		}
		c.AddZones(d)
	}
	if err := ValidateConfig(c); err != nil {
		return fmt.Errorf("invalid agent config with the zones of its shards: %w", err)
	}
	return nil
}

// ParseConfig decodes and validates an agent.json document; name is used in errors.
func ParseConfig(name string, b []byte) (*layout.AgentConfigDoc, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c layout.AgentConfigDoc
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("cannot parse agent config %s: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("cannot parse agent config %s: trailing data after the JSON object", name)
	}
	if err := ValidateConfig(&c); err != nil {
		return nil, fmt.Errorf("invalid agent config %s: %w", name, err)
	}
	return &c, nil
}

// ValidateConfig checks what the agent relies on; the first problem is
// returned with its JSON path.
func ValidateConfig(c *layout.AgentConfigDoc) error {
	if c.PrimaryConf == "" {
		return fmt.Errorf("primaryConf: must be set")
	}
	if c.SecondaryConf == "" {
		return fmt.Errorf("secondaryConf: must be set")
	}
	if c.ResolveIntervalSeconds < 0 {
		return fmt.Errorf("resolveIntervalSeconds: must not be negative")
	}
	if c.MetricsPort < 0 || c.MetricsPort > 65535 {
		return fmt.Errorf("metricsPort: %d is not a port", c.MetricsPort)
	}
	lists := map[string]bool{}
	for i, l := range c.ServerLists {
		p := fmt.Sprintf("serverLists[%d]", i)
		if err := checkName(l.Name); err != nil {
			return fmt.Errorf("%s.name: %w", p, err)
		}
		if lists[l.Name] {
			return fmt.Errorf("%s.name: duplicate list %q", p, l.Name)
		}
		lists[l.Name] = true
		if l.Role != string(RolePrimary) && l.Role != string(RoleSecondary) {
			return fmt.Errorf("%s.role: %q is neither %q nor %q", p, l.Role, RolePrimary, RoleSecondary)
		}
		if l.Key != "" {
			if err := checkName(l.Key); err != nil {
				return fmt.Errorf("%s.key: %w", p, err)
			}
		}
		if l.Port < 0 || l.Port > 65535 {
			return fmt.Errorf("%s.port: %d is not a port", p, l.Port)
		}
		for j, h := range l.Hosts {
			if h == "" || strings.ContainsAny(h, " \t\r\n\"") {
				return fmt.Errorf("%s.hosts[%d]: %q is not a host name", p, j, h)
			}
		}
	}
	for i, k := range c.ImportedKeys {
		p := fmt.Sprintf("importedKeys[%d]", i)
		if err := checkName(k.KeyName); err != nil {
			return fmt.Errorf("%s.keyName: %w", p, err)
		}
		if k.Secret == "" || strings.ContainsAny(k.Secret, "/\x00") || k.Secret == "." || k.Secret == ".." {
			return fmt.Errorf("%s.secret: %q is not a Secret name", p, k.Secret)
		}
		if k.Algorithm != "" && !validAlgorithm(k.Algorithm) {
			return fmt.Errorf("%s.algorithm: %q is not a TSIG algorithm BIND knows", p, k.Algorithm)
		}
	}
	for i, s := range c.SeedZones {
		p := fmt.Sprintf("seedZones[%d]", i)
		if s.Source == "" || s.Dest == "" {
			return fmt.Errorf("%s: source and dest must be set", p)
		}
	}
	for i, z := range c.DynamicZones {
		p := fmt.Sprintf("dynamicZones[%d]", i)
		if z.Zone == "" {
			return fmt.Errorf("%s.zone: must be set", p)
		}
		if err := checkName(z.KeyName); err != nil {
			return fmt.Errorf("%s.keyName: %w", p, err)
		}
		if z.KeyFile == "" {
			return fmt.Errorf("%s.keyFile: must be set", p)
		}
	}
	for i, z := range append(append([]layout.ZoneRef{}, c.PrimaryZones...), c.SecondaryZones...) {
		if z.Zone == "" {
			return fmt.Errorf("zone %d of primaryZones/secondaryZones: zone must be set", i)
		}
	}
	return nil
}

// checkName accepts names that are safe inside a quoted named.conf string.
func checkName(s string) error {
	if s == "" {
		return fmt.Errorf("must be set")
	}
	for _, r := range s {
		if r < 0x21 || r == 0x7f || r == '"' || r == '\\' || r == ';' || r == '{' || r == '}' {
			return fmt.Errorf("%q contains %q, which a BIND name must not", s, r)
		}
	}
	return nil
}
