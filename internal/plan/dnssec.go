package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/mapkeys"
)

// DNSSECStep is what a change does to a signed zone's chain of trust: the
// DS records that appear at or leave the parent (ds.txt of the DS
// ConfigMap), and the rollover step the render takes. A parent zone in the
// same cluster gets the DS from the render (its DS RRset shows among the
// zones' changes); any other parent needs a human, with these lines.
type DNSSECStep struct {
	Zone string `json:"zone"`
	// Rollover is the rollover this step belongs to ("ksk 2027-01"), and
	// Step what the render does for it: started, finished.
	Rollover string `json:"rollover,omitempty"`
	Step     string `json:"step,omitempty"`
	// Publish are DS lines to add at the parent, Remove DS lines to take
	// out of it.
	Publish []string `json:"publish,omitempty"`
	Remove  []string `json:"remove,omitempty"`
}

// Rollover steps.
const (
	StepStarted  = "started"
	StepFinished = "finished"
)

// dsState is a cluster's DS ConfigMap as the plan reads it: ds.txt's lines
// by zone, and the rollover record.
type dsState struct {
	ds    map[string][]string
	rolls dnssec.RollRecord
}

func readDS(s *snapshot) dsState {
	st := dsState{ds: map[string][]string{}}
	o := s.objs["ConfigMap/"+layout.DSConfigMapName(s.name)]
	if o == nil {
		return st
	}
	for _, line := range strings.Split(string(o.Data[layout.DSFile]), "\n") {
		rr, err := dns.NewRR(line)
		if err != nil || rr == nil {
			continue
		}
		z := dns.CanonicalName(rr.Header().Name)
		st.ds[z] = append(st.ds[z], strings.TrimSpace(line))
	}
	for _, l := range st.ds {
		slices.Sort(l)
	}
	if raw := o.Annotations[layout.DNSSECRolloversAnnotation]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &st.rolls) // unreadable: no rollover to show
	}
	return st
}

// compareDNSSEC lists, per signed zone, the DS lines that change and the
// rollover steps taken.
func compareDNSSEC(o, n *snapshot) []DNSSECStep {
	a, b := readDS(o), readDS(n)
	var out []DNSSECStep
	zones := mapkeys.Union(a.ds, b.ds)
	for _, z := range mapkeys.Union(a.rolls, b.rolls) {
		if !slices.Contains(zones, z) {
			zones = append(zones, z)
		}
	}
	slices.SortFunc(zones, compareNames)
	for _, z := range zones {
		removed, added := diffLines(a.ds[z], b.ds[z])
		var rolls []string
		var step string
		for _, r := range b.rolls[z] {
			was := slices.IndexFunc(a.rolls[z], func(p dnssec.Roll) bool { return p.Role == r.Role && p.Label == r.Label })
			switch {
			case was < 0 && !r.Done:
				step = StepStarted
			case was >= 0 && r.Done && !a.rolls[z][was].Done:
				step = StepFinished
			default:
				continue
			}
			rolls = append(rolls, fmt.Sprintf("%s %s (key %d to %d)", r.Role, r.Label, r.Old, r.New))
		}
		if len(removed) == 0 && len(added) == 0 && len(rolls) == 0 {
			continue
		}
		out = append(out, DNSSECStep{Zone: z, Rollover: strings.Join(rolls, ", "), Step: step, Publish: added, Remove: removed})
	}
	return out
}

// writeDNSSEC writes the DNSSEC steps of a cluster: what a human does at a
// parent outside the cluster, in order.
func writeDNSSEC(b *strings.Builder, steps []DNSSECStep) {
	if len(steps) == 0 {
		return
	}
	b.WriteString("\n#### DNSSEC: the parent's DS\n\n")
	b.WriteString("A parent zone in this cluster gets these DS records from the render (its DS RRset below); any other parent needs them by hand.\n")
	for _, s := range steps {
		fmt.Fprintf(b, "\n`%s`", s.Zone)
		if s.Rollover != "" {
			fmt.Fprintf(b, ": rollover %s %s", s.Rollover, s.Step)
		}
		b.WriteString("\n")
		if len(s.Publish) > 0 {
			b.WriteString("- **publish** at the parent")
			if len(s.Remove) == 0 && s.Step == StepStarted {
				b.WriteString(", beside the old DS (keep it until the rollover is done)")
			}
			b.WriteString(":\n")
			writeLines(b, s.Publish)
		}
		if len(s.Remove) > 0 {
			b.WriteString("- **remove** from the parent:\n")
			writeLines(b, s.Remove)
		}
	}
}

func writeLines(b *strings.Builder, lines []string) {
	b.WriteString("  ```\n")
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("  ```\n")
}
