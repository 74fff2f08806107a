package pkggen

import (
	"slices"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// TestVocabDraws: over a few hundred seeds every TSIG algorithm and every
// DNSSEC algorithm of internal/vocab is drawn, but for those dnssecNotDrawn
// leaves out with a reason; those are vocab entries (or aliases) and are
// never drawn; the refused draws are algorithms vocab does not accept.
func TestVocabDraws(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(0); seed < 500; seed++ {
		for _, o := range Generate(seed, Options{MistakeRate: 0.3, LimitRate: 0.5}).Objects {
			switch o.Kind {
			case "BindTSIGKey":
				if a, ok := o.Spec["algorithm"].(string); ok {
					seen["tsig "+a] = true
				}
			case "BindDNSSECPolicy":
				keys, _ := o.Spec["keys"].([]any)
				for _, k := range keys {
					if a, ok := k.(map[string]any)["algorithm"].(string); ok {
						seen["dnssec "+a] = true
					}
				}
			}
		}
	}
	for _, a := range vocab.TSIG {
		if !seen["tsig "+a.Name] {
			t.Errorf("TSIG algorithm %s never drawn in 500 seeds", a.Name)
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for _, a := range vocab.DNSSEC {
			if !yield(a.Name) {
				return
			}
		}
		for alias := range vocab.DNSSECAliases {
			if !yield(alias) {
				return
			}
		}
	})
	for _, n := range names {
		why, excluded := dnssecNotDrawn[n]
		switch {
		case excluded && why == "":
			t.Errorf("DNSSEC algorithm %s is left out of the draws without a reason", n)
		case !excluded && !seen["dnssec "+n]:
			t.Errorf("DNSSEC algorithm %s never drawn in 500 seeds, and dnssecNotDrawn does not say why", n)
		case n == "rsasha1" && !seen["dnssec "+n]:
			t.Errorf("the mistake rsasha1-with-nsec3 never drew rsasha1 in 500 seeds, although dnssecNotDrawn says %q", why)
		case excluded && n != "rsasha1" && seen["dnssec "+n]:
			t.Errorf("DNSSEC algorithm %s is drawn although dnssecNotDrawn says %q", n, why)
		}
	}
	for n := range dnssecNotDrawn {
		if !slices.Contains(names, n) {
			t.Errorf("dnssecNotDrawn lists %s, which vocab does not know", n)
		}
	}
	for _, n := range dnssecRefusedDraws {
		if a, ok := vocab.DNSSECByName(n); !ok || a.Accepted {
			t.Errorf("refused draw %s is not an algorithm vocab refuses", n)
		}
	}
}
