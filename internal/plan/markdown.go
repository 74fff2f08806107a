package plan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Limits keep a Markdown plan readable: long lists are cut, with totals.
type Limits struct {
	// RRsets is the most RRset changes shown per zone.
	RRsets int
	// Zones is the most zones shown in detail per cluster; the rest get a
	// line of counts each, up to ZoneLines.
	Zones     int
	ZoneLines int
	// Config is the most named.conf lines shown per cluster.
	Config int
}

// DefaultLimits suit a pull-request comment.
var DefaultLimits = Limits{RRsets: 40, Zones: 25, ZoneLines: 200, Config: 60}

// JSON is the plan as indented JSON, complete (never cut).
func (p *Plan) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Summary is the one-line headline of the plan.
func (p *Plan) Summary() string {
	if !p.Changed {
		return "No changes."
	}
	t := p.Totals
	var parts []string
	if n := t.ZonesAdded + t.ZonesRemoved + t.ZonesChanged; n > 0 {
		parts = append(parts, fmt.Sprintf("zones: %d added, %d changed, %d removed", t.ZonesAdded, t.ZonesChanged, t.ZonesRemoved))
	}
	if n := t.RRsetsAdded + t.RRsetsChanged + t.RRsetsRemoved; n > 0 {
		parts = append(parts, fmt.Sprintf("RRsets: +%d ~%d -%d", t.RRsetsAdded, t.RRsetsChanged, t.RRsetsRemoved))
	}
	if t.KeysChanged > 0 {
		parts = append(parts, fmt.Sprintf("keys: %d", t.KeysChanged))
	}
	if t.ConfigChanges > 0 {
		parts = append(parts, fmt.Sprintf("named.conf: %d %s", t.ConfigChanges, plural(t.ConfigChanges, "line")))
	}
	if t.ClustersRolled > 0 {
		parts = append(parts, fmt.Sprintf("pods roll in %d %s", t.ClustersRolled, plural(t.ClustersRolled, "cluster")))
	} else {
		parts = append(parts, "no pod restarts")
	}
	if !p.DNSChange {
		parts = append([]string{"no DNS change"}, parts...)
	}
	return strings.Join(parts, " · ")
}

// Markdown is the plan for a pull-request comment.
func (p *Plan) Markdown(lim Limits) string {
	var b strings.Builder
	b.WriteString("## bind-fn plan\n\n")
	fmt.Fprintf(&b, "**%s**\n", p.Summary())
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "\n> %s\n", n)
	}
	for _, c := range p.Clusters {
		writeCluster(&b, c, lim)
	}
	return b.String()
}

func writeCluster(b *strings.Builder, c ClusterPlan, lim Limits) {
	fmt.Fprintf(b, "\n### BindCluster %s/%s: %s\n\n", c.Namespace, c.Name, c.Change)
	r := c.Rollout
	switch {
	case c.Change == Added:
		b.WriteString("New cluster: its StatefulSet starts every pod.\n")
	case c.Change == Removed:
		b.WriteString("Cluster removed: every object is deleted (prune), its pods stop.\n")
	case r.RollsPods:
		fmt.Fprintf(b, "**Rolls the pods** (one at a time): the pod template changes at %s.\n", codeList(r.Reasons))
	default:
		b.WriteString("Applied live by the agent, no pod restart.\n")
	}
	for _, l := range r.Live {
		fmt.Fprintf(b, "- %s\n", l)
	}
	for _, l := range r.NotApplied {
		fmt.Fprintf(b, "- **not applied to running pods**: %s\n", l)
	}
	if len(c.Objects) > 0 {
		b.WriteString("\nObjects: ")
		var parts []string
		for _, o := range c.Objects {
			parts = append(parts, fmt.Sprintf("%s `%s` %s", o.Kind, o.Name, o.Change))
		}
		b.WriteString(strings.Join(parts, ", ") + ".\n")
	}
	if len(c.Keys) > 0 {
		b.WriteString("\n#### TSIG keys\n\n| key | change | Secret |\n|---|---|---|\n")
		for _, k := range c.Keys {
			ch := k.Change
			if k.Imported {
				ch += " (imported)"
			}
			fmt.Fprintf(b, "| `%s` | %s | `%s` |\n", k.Name, ch, k.Secret)
		}
	}
	if len(c.Config) > 0 && c.Change != Changed {
		// A whole new (or deleted) file: counted here, listed in the JSON.
		fmt.Fprintf(b, "\nnamed.conf: %d lines %s (--format json lists them).\n", len(c.Config), c.Change)
	} else if len(c.Config) > 0 {
		b.WriteString("\n#### named.conf\n\n```diff\n")
		writeConf(b, c.Config, lim.Config)
		b.WriteString("```\n")
	}
	writeDNSSEC(b, c.DNSSEC)
	if len(c.Zones) == 0 {
		return
	}
	fmt.Fprintf(b, "\n#### Zones (%d)\n", len(c.Zones))
	for i, z := range c.Zones {
		if i >= lim.Zones {
			writeZoneLines(b, c.Zones[i:], lim.ZoneLines)
			break
		}
		writeZone(b, z, lim)
	}
}

func writeConf(b *strings.Builder, cs []ConfChange, limit int) {
	for i, l := range cs {
		if i >= limit {
			fmt.Fprintf(b, "# … %d more lines (%d in total)\n", len(cs)-i, len(cs))
			break
		}
		role := ""
		if l.Role != "both" && l.Role != "" {
			role = "  # " + l.Role + " only"
		}
		fmt.Fprintf(b, "%s %s%s\n", l.Op, l.Line, role)
	}
}

func zoneTitle(z ZonePlan) string {
	t := "`" + z.Zone + "`"
	if z.View != "" {
		t += " (view `" + z.View + "`)"
	}
	return t
}

func writeZone(b *strings.Builder, z ZonePlan, lim Limits) {
	fmt.Fprintf(b, "\n##### %s: %s", zoneTitle(z), z.Change)
	var facts []string
	if z.Type != "" {
		t := z.Type
		if z.OldType != "" {
			t = z.OldType + " → " + z.Type
		}
		facts = append(facts, t)
	}
	switch {
	case z.Serial != nil && z.Change == Added:
		facts = append(facts, fmt.Sprintf("serial %d", z.Serial.New))
	case z.Serial != nil && z.Apply == applyUpdate:
		// BIND bumps a dynamic zone's live serial on every UPDATE.
		facts = append(facts, fmt.Sprintf("seed serial %d → %d", z.Serial.Old, z.Serial.New))
	case z.Serial != nil:
		facts = append(facts, fmt.Sprintf("serial %d → %d", z.Serial.Old, z.Serial.New))
	}
	if c := countLine(z.Counts); c != "" {
		facts = append(facts, c)
	}
	if z.Change == Changed && (len(z.RRsets) > 0 || z.Serial != nil) {
		facts = append(facts, applyWords(z.Apply))
	}
	if len(facts) > 0 {
		fmt.Fprintf(b, " · %s", strings.Join(facts, " · "))
	}
	b.WriteString("\n")
	if z.Error != "" {
		fmt.Fprintf(b, "\n> cannot read the zone: %s\n", z.Error)
	}
	if len(z.Config) > 0 {
		b.WriteString("\n```diff\n")
		writeConf(b, z.Config, lim.Config)
		b.WriteString("```\n")
	}
	if len(z.RRsets) == 0 {
		return
	}
	b.WriteString("\n```diff\n")
	for i, c := range z.RRsets {
		if i >= lim.RRsets {
			fmt.Fprintf(b, "# … %d more RRset changes (%d in total: +%d ~%d -%d); --format json lists them all\n",
				len(z.RRsets)-i, len(z.RRsets), z.Counts.Added, z.Counts.Changed, z.Counts.Removed)
			break
		}
		writeRRset(b, c)
	}
	b.WriteString("```\n")
}

func applyWords(a string) string {
	switch a {
	case applyReload:
		return "applied by rndc reload"
	case applyUpdate:
		return "applied by UPDATE"
	case applySeed:
		return "seed only (not applied to running pods)"
	}
	return "nothing to apply (transferred or forwarded)"
}

func writeRRset(b *strings.Builder, c RRsetChange) {
	if c.Change == Changed {
		fmt.Fprintf(b, "# %s %s", c.Name, c.Type)
		if *c.OldTTL != *c.NewTTL {
			fmt.Fprintf(b, " (TTL %d → %d)", *c.OldTTL, *c.NewTTL)
		}
		b.WriteString("\n")
	}
	for _, v := range c.Old {
		fmt.Fprintf(b, "- %s %d %s %s\n", c.Name, *c.OldTTL, c.Type, v)
	}
	for _, v := range c.New {
		fmt.Fprintf(b, "+ %s %d %s %s\n", c.Name, *c.NewTTL, c.Type, v)
	}
}

// countLine is "+3 A, +1 TXT, ~1 MX" style counts: totals, then by type.
func countLine(c Counts) string {
	if c.Added+c.Changed+c.Removed == 0 {
		return ""
	}
	s := fmt.Sprintf("+%d ~%d -%d RRsets", c.Added, c.Changed, c.Removed)
	if len(c.ByType) > 1 {
		var types []string
		for t := range c.ByType {
			types = append(types, t)
		}
		sort.Slice(types, func(i, j int) bool {
			if c.ByType[types[i]] != c.ByType[types[j]] {
				return c.ByType[types[i]] > c.ByType[types[j]]
			}
			return types[i] < types[j]
		})
		var parts []string
		for _, t := range types {
			parts = append(parts, fmt.Sprintf("%d %s", c.ByType[t], t))
		}
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func writeZoneLines(b *strings.Builder, zs []ZonePlan, limit int) {
	fmt.Fprintf(b, "\n%d more zones, counts only:\n\n", len(zs))
	for i, z := range zs {
		if i >= limit {
			fmt.Fprintf(b, "- … and %d more zones; --format json lists them all\n", len(zs)-i)
			return
		}
		line := z.Change
		if c := countLine(z.Counts); c != "" {
			line += ", " + c
		}
		fmt.Fprintf(b, "- %s: %s\n", zoneTitle(z), line)
	}
}

func codeList(s []string) string {
	var out []string
	for _, x := range s {
		out = append(out, "`"+x+"`")
	}
	return listCut(out, 8)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
