package pkggen

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestDeterministic: the same seed gives the same bytes.
func TestDeterministic(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		a := Generate(seed, Options{MistakeRate: 0.3}).YAML()
		b := Generate(seed, Options{MistakeRate: 0.3}).YAML()
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d: two generations differ", seed)
		}
	}
	if os.Getenv("PKGGEN_DUMP") != "" {
		os.Stdout.Write(Generate(1, Options{MistakeRate: 0.3}).YAML())
	}
}

// TestCoverage: over a few hundred seeds the generator sets every spec field
// of the nine kinds (walked from the API types' JSON tags), every RPZ
// action, every zone type and every record type it knows. Fields it never
// sets must be listed in notVaried, with the reason.
func TestCoverage(t *testing.T) {
	seen := map[string]bool{}
	types := map[string]bool{}
	for seed := uint64(0); seed < 400; seed++ {
		p := Generate(seed, Options{MistakeRate: 0.3})
		for _, o := range p.Objects {
			walkFields(o.Kind+".spec", o.Spec, seen)
			if o.Kind == "BindZone" || o.Kind == "BindPolicy" {
				recs, _ := o.Spec["records"].([]any)
				for _, r := range recs {
					types[r.(map[string]any)["type"].(string)] = true
				}
			}
			if o.Kind == "DNSRecord" {
				types[o.Spec["type"].(string)] = true
			}
			if o.Kind == "BindPolicy" {
				rules, _ := o.Spec["rules"].([]any)
				for _, r := range rules {
					if a, ok := r.(map[string]any)["action"].(string); ok {
						seen["action="+a] = true
					}
				}
			}
			if o.Kind == "BindZone" {
				if z, ok := o.Spec["type"].(string); ok {
					seen["zonetype="+z] = true
				}
				if o.Spec["zoneName"] == "." {
					seen["zone=."] = true
				}
			}
		}
	}
	var missing []string
	for _, f := range apiFields() {
		if !seen[f] && notVaried[f] == "" {
			missing = append(missing, f)
		}
	}
	for _, a := range []string{"nxdomain", "nodata", "passthru", "drop", "tcp-only", "redirect"} {
		if !seen["action="+a] {
			missing = append(missing, "action "+a)
		}
	}
	for _, z := range []string{"primary", "secondary", "stub", "forward"} {
		if !seen["zonetype="+z] {
			missing = append(missing, "zone type "+z)
		}
	}
	if !seen["zone=."] {
		missing = append(missing, "the root zone")
	}
	for _, ty := range zoneTypes() {
		if !types[ty] {
			missing = append(missing, "record type "+ty)
		}
	}
	if len(missing) > 0 {
		t.Errorf("never generated in 400 seeds:\n%s", strings.Join(missing, "\n"))
	}
	t.Logf("%d spec fields, %d record types covered", len(seen), len(types))
}

func walkFields(prefix string, v any, seen map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			seen[prefix+"."+k] = true
			walkFields(prefix+"."+k, e, seen)
		}
	case []any:
		for _, e := range x {
			walkFields(prefix, e, seen)
		}
	}
}

// TestLimitCoverage: over a thousand seeds every limit draw (each value
// at and just past a limit, each duration relation, each collision of the
// shared name pool) is drawn at least once, and applies.
func TestLimitCoverage(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(0); seed < 1000; seed++ {
		for _, d := range Generate(seed, Options{MistakeRate: 0.3, LimitRate: 0.5}).Drawn {
			seen[d]++
		}
	}
	var missing []string
	for _, tag := range LimitTags() {
		if seen[tag] == 0 {
			missing = append(missing, tag)
		}
	}
	if len(missing) > 0 {
		t.Errorf("never drawn in 1000 seeds:\n%s", strings.Join(missing, "\n"))
	}
	t.Logf("%d limit draws, %d drawn", len(LimitTags()), len(seen))
}

// TestDynamicCoverage: over a few hundred seeds the dynamic cases hold
// every TSIG algorithm, views, a child zone, a delegation with glue and DS,
// wildcards, DNSRecords added, changed and removed, and every record type
// but those fn-validate refuses outright (dynNoForm).
func TestDynamicCoverage(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(0); seed < 300; seed++ {
		dc := GenerateDynamic(seed)
		for _, e := range dc.Edits {
			for _, x := range e {
				seen["edit "+strings.Fields(x)[0]] = true
			}
		}
		for _, p := range dc.Steps {
			for _, o := range p.Objects {
				switch o.Kind {
				case "BindTSIGKey":
					seen["alg "+o.Spec["algorithm"].(string)] = true
				case "BindView":
					seen["views"] = true
				case "BindZone":
					if o.Spec["type"] == "stub" {
						seen["stub zone"] = true
					}
					if strings.HasPrefix(o.Spec["zoneName"].(string), "child.") {
						seen["child zone"] = true
					}
					recs, _ := o.Spec["records"].([]any)
					for _, r := range recs {
						dynSeen(seen, r.(map[string]any))
					}
				case "DNSRecord":
					dynSeen(seen, o.Spec)
				}
			}
		}
	}
	want := []string{"views", "child zone", "rrset of 100", "long name", "delegation glue", "delegation DS", "wildcard", "edit add", "edit change", "edit ttl", "edit remove", "edit retype", "stub zone"}
	for _, a := range tsigAlgs {
		want = append(want, "alg "+a)
	}
	for _, ty := range zoneTypes() {
		if !dynNoForm[ty] {
			want = append(want, "type "+ty)
		}
	}
	var missing []string
	for _, w := range want {
		if !seen[w] {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		t.Errorf("never in 300 dynamic cases:\n%s", strings.Join(missing, "\n"))
	}
}

func dynSeen(seen map[string]bool, r map[string]any) {
	name, _ := r["name"].(string)
	if v, _ := r["values"].([]any); len(v) == 100 {
		seen["rrset of 100"] = true
	}
	if len(name) > 150 {
		seen["long name"] = true
	}
	seen["type "+r["type"].(string)] = true
	if strings.HasPrefix(name, "*") {
		seen["wildcard"] = true
	}
	if strings.HasPrefix(name, "ns1.deleg") {
		seen["delegation glue"] = true
	}
	if name == "deleg" && r["type"] == "DS" {
		seen["delegation DS"] = true
	}
}
