package differential

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/testenv"
	"git.unkin.net/unkin/bind-fn/test/pkggen"
)

// Environment of TestRandomPackages (make test runs the defaults).
const (
	envN        = "BINDFN_DIFF_N"           // packages (default 24)
	envSeed     = "BINDFN_DIFF_SEED"        // first seed (default 1); package i has seed+i
	envPar      = "BINDFN_DIFF_PAR"         // packages checked at once (default 2)
	envMistakes = "BINDFN_DIFF_MISTAKES"    // share of packages with one mistake (default 0.3)
	envLimits   = "BINDFN_DIFF_LIMITS"      // share of packages with one limit draw (default 0.3)
	envShrink   = "BINDFN_DIFF_SHRINK"      // directory: shrink every new divergence into it
	envLog      = "BINDFN_DIFF_LOG"         // file: one line per package
	envNoNamed  = "BINDFN_DIFF_NO_NAMED"    // 1: skip starting named (checkconf/checkzone only)
	envDuration = "BINDFN_DIFF_DURATION"    // stop starting packages after this long (e.g. 40m)
	envNoXfer   = "BINDFN_DIFF_NO_TRANSFER" // 1: run each role alone (no transfer stage)
)

// Case is a kept divergence: testdata/divergences/<name>/{input.yaml,expect.yaml}.
type Case struct {
	// Want is the agreement once fixed: "loads" (fn-validate accepts and BIND
	// loads every role), "refused" (fn-validate refuses, and BIND refuses
	// the render with the checks bypassed), "agree" (either of the two: the
	// fix may go either way), or "documented" (fn-validate refuses although
	// BIND loads it, and docs/validation.md says so: it contains Docs).
	Want string `json:"want"`
	Docs string `json:"docs,omitempty"`
	// Open: the divergence still exists on this branch. The test then fails
	// when the two agree (delete the line with the fix).
	Open bool `json:"open,omitempty"`
	// Finding: what is wrong and which layer should change (FINDINGS.md).
	Finding string `json:"finding,omitempty"`
	// Mistakes the generator injected (none: meant valid).
	Mistakes []string `json:"mistakes,omitempty"`
	// Seed of the random package it was shrunk from.
	Seed uint64 `json:"seed"`
	// Signature of the divergence (Divergence.Signature), for matching the
	// random run's findings to kept cases; Observed is the verdict it was
	// recorded from. Both are rewritten with BINDFN_DIFF_UPDATE=1.
	Signature string `json:"signature"`
	Observed  string `json:"observed,omitempty"`
	// Aliases are other signatures of the same defect (BIND reports the
	// same problem first in another file in other packages).
	Aliases []string `json:"aliases,omitempty"`
}

const envUpdate = "BINDFN_DIFF_UPDATE"

func observed(v Verdict) string {
	if v.Accepted {
		return "fn-validate accepts; BIND: " + failures(v)
	}
	return "fn-validate refuses: " + strings.Join(v.Errors, "; ") + "\nBIND (checks bypassed): " + failures(v)
}

func casesDir(t testing.TB) string {
	return filepath.Join(bindtools.RepoRoot(t), "test", "differential", "testdata", "divergences")
}

func loadCases(t testing.TB) map[string]Case {
	dirs, _ := filepath.Glob(filepath.Join(casesDir(t), "*", "expect.yaml"))
	out := map[string]Case{}
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c Case
		if err := yaml.UnmarshalStrict(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(filepath.Dir(f))] = c
	}
	return out
}

// requirements: real BIND and root (private namespaces, offline checkers).
func requirements(t *testing.T) {
	t.Helper()
	bindtools.RequireBIND(t)
	bindtools.RequireRoot(t)
}

// TestDivergences runs every kept divergence: each fails while fn-validate
// and BIND disagree on it (or, marked open, until they agree).
func TestDivergences(t *testing.T) {
	requirements(t)
	cases := loadCases(t)
	if len(cases) == 0 {
		t.Fatal("no cases under testdata/divergences")
	}
	names := slices.Sorted(maps.Keys(cases))
	for _, name := range names {
		c := cases[name]
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(casesDir(t), name, "input.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			items, err := testutil.DecodeItems("input.yaml", data)
			if err != nil {
				t.Fatal(err)
			}
			v := Check(t, items, Options{Named: true, Transfer: true, Bypass: true})
			loads := v.Accepted && len(v.BIND) == 0
			refused := !v.Accepted && (!v.Rendered || len(v.BIND) > 0)
			var agree bool
			switch c.Want {
			case "loads":
				agree = loads
			case "refused":
				agree = refused
			case "agree":
				agree = loads || refused
			case "documented":
				doc, err := os.ReadFile(filepath.Join(bindtools.RepoRoot(t), "docs", "validation.md"))
				if err != nil {
					t.Fatal(err)
				}
				agree = !v.Accepted && c.Docs != "" && strings.Contains(string(doc), c.Docs)
			default:
				t.Fatalf("want: %q, need loads, refused, agree or documented", c.Want)
			}
			why := fmt.Sprintf("want %s; got %s", c.Want, observed(v))
			if os.Getenv(envUpdate) == "1" {
				if d := Classify(c.Mistakes, v); d != nil {
					c.Signature = d.Signature()
				}
				c.Observed = observed(v)
				y, _ := yaml.Marshal(c)
				if err := os.WriteFile(filepath.Join(casesDir(t), name, "expect.yaml"), y, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			switch {
			case c.Open && agree:
				t.Errorf("fixed: fn-validate and BIND agree now (%s); delete `open: true` from expect.yaml", c.Want)
			case c.Open:
				t.Logf("still open (%s): %s", c.Finding, why)
			case !agree:
				t.Errorf("divergence %s: %s", c.Finding, why)
			}
		})
	}
}

func failures(v Verdict) string {
	if len(v.BIND) == 0 {
		if !v.Rendered {
			return "(not asked: " + v.Bypass + ")"
		}
		return "loads"
	}
	var s []string
	for _, f := range v.BIND {
		s = append(s, f.String())
	}
	return strings.Join(s, "; ")
}

type outcome struct {
	seed uint64
	pkg  pkggen.Package
	v    Verdict
	d    *Divergence
}

// TestRandomPackages is the differential run: BINDFN_DIFF_N generated
// packages from BINDFN_DIFF_SEED on, each checked by fn-validate and real
// BIND. A divergence that no kept case (testdata/divergences) covers fails
// the test; with BINDFN_DIFF_SHRINK=<dir> each new one is shrunk into dir.
func TestRandomPackages(t *testing.T) {
	requirements(t)
	n := testenv.Int(t, envN, 24)
	seed := uint64(testenv.Int(t, envSeed, 1))
	par := max(1, testenv.Int(t, envPar, 2))
	rate, limits := testenv.Rate(t, envMistakes, 0.3), testenv.Rate(t, envLimits, 0.3)
	opt := Options{Named: os.Getenv(envNoNamed) != "1", Transfer: os.Getenv(envNoXfer) != "1", Bypass: true}
	var logf *os.File
	if p := os.Getenv(envLog); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		logf = f
	}
	known := map[string]string{}
	for name, c := range loadCases(t) {
		if c.Open { // a fixed case's divergence showing again is a regression
			known[c.Signature] = name
			for _, a := range c.Aliases {
				known[a] = name
			}
		}
	}

	start := time.Now()
	jobs := make(chan uint64)
	results := make(chan outcome)
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				p := pkggen.Generate(s, pkggen.Options{MistakeRate: rate, LimitRate: limits})
				v := Check(t, p.Items(), opt)
				results <- outcome{seed: s, pkg: p, v: v, d: Classify(p.Mistakes, v)}
			}
		}()
	}
	until := testenv.Until(t, envDuration, start)
	go func() {
		for i := 0; i < n; i++ {
			if !until.IsZero() && time.Now().After(until) {
				break
			}
			jobs <- seed + uint64(i)
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	var accepted, refused, loadsOK, divergent, unasked, done int
	bySig := map[string][]outcome{}
	for o := range results {
		done++
		switch {
		case o.v.Accepted:
			accepted++
			if len(o.v.BIND) == 0 {
				loadsOK++
			}
		default:
			refused++
			if !o.v.Rendered {
				unasked++
			}
		}
		line := fmt.Sprintf("seed=%d mistakes=%v drawn=%v accepted=%v bind_failures=%d", o.seed, o.pkg.Mistakes, o.pkg.Drawn, o.v.Accepted, len(o.v.BIND))
		if o.d != nil {
			divergent++
			sig := o.d.Signature()
			bySig[sig] = append(bySig[sig], o)
			line += " DIVERGENCE " + sig
		}
		if logf != nil {
			fmt.Fprintln(logf, line)
		}
	}
	el := time.Since(start)
	n = done
	t.Logf("%d packages (seeds %d..%d) in %s: %.2f packages/s; accepted %d (BIND loads %d), refused %d (%d not askable), divergent %d in %d kinds",
		n, seed, seed+uint64(n)-1, el.Round(time.Millisecond), float64(n)/el.Seconds(), accepted, loadsOK, refused, unasked, divergent, len(bySig))
	sigs := slices.Sorted(maps.Keys(bySig))
	shrinkDir := os.Getenv(envShrink)
	for _, sig := range sigs {
		list := bySig[sig]
		sort.Slice(list, func(i, j int) bool { return len(list[i].pkg.Objects) < len(list[j].pkg.Objects) })
		first := list[0]
		if name, ok := known[sig]; ok {
			t.Logf("known divergence (testdata/divergences/%s), %d packages: %s", name, len(list), sig)
			continue
		}
		t.Errorf("new divergence in %d packages (smallest: seed %d, mistakes %v):\n  %s\n  %s", len(list), first.seed, first.pkg.Mistakes, sig, first.d.Detail)
		if shrinkDir != "" {
			writeShrunk(t, shrinkDir, first)
		}
	}
	if logf != nil {
		fmt.Fprintf(logf, "SUMMARY n=%d seed=%d elapsed=%s rate=%.3f/s accepted=%d loads=%d refused=%d unaskable=%d divergent=%d kinds=%d\n",
			n, seed, el.Round(time.Second), float64(n)/el.Seconds(), accepted, loadsOK, refused, unasked, divergent, len(bySig))
		for _, sig := range sigs {
			fmt.Fprintf(logf, "KIND %d %s (seed %d)\n", len(bySig[sig]), sig, bySig[sig][0].seed)
		}
	}
}

var slugRe = regexp.MustCompile(`[^a-z0-9]+`)

// writeShrunk shrinks a divergence and writes it as a case (open: it fails
// on this branch until fixed).
func writeShrunk(t *testing.T, dir string, o outcome) {
	p, evals := Shrink(t, o.pkg, *o.d, 400, 5*time.Minute)
	sig := o.d.Signature()
	words := strings.Fields(slugRe.ReplaceAllString(strings.ToLower(sig[strings.LastIndex(sig, "|")+1:]), " "))
	if len(words) > 6 {
		words = words[:6]
	}
	kind := "accepted"
	if o.d.Kind == RefusedLoads {
		kind = "refused"
	}
	name := fmt.Sprintf("%s-seed%d-%s", kind, o.seed, strings.Join(words, "-"))
	// meant valid: it should load (fix the renderer or the validator's
	// refusal); a mistake: fn-validate should refuse it
	want := "refused"
	if len(o.pkg.Mistakes) == 0 {
		want = "loads"
	}
	v := Check(t, p.Items(), Options{Named: true, Bypass: true})
	c := Case{Want: want, Open: true, Signature: sig, Seed: o.seed, Mistakes: o.pkg.Mistakes, Observed: observed(v)}
	out := filepath.Join(dir, name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	y, _ := yaml.Marshal(c)
	if err := os.WriteFile(filepath.Join(out, "expect.yaml"), y, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "input.yaml"), p.YAML(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("shrunk seed %d to %d objects in %d evaluations: %s", o.seed, len(p.Objects), evals, out)
}

// TestLimitDraws asks BIND about every limit draw of the generator
// (pkggen.LimitTags) on a small clean package: a value at a limit, or
// durations on the allowed side of a relation, must be accepted and load;
// one just past must be refused by fn-validate and by BIND (or be a
// refusal docs/validation.md documents). The random run draws the same
// values inside larger packages.
func TestLimitDraws(t *testing.T) {
	requirements(t)
	for _, tag := range pkggen.LimitTags() {
		t.Run(tag, func(t *testing.T) {
			p, ok := pkggen.LimitCase(tag)
			if !ok {
				t.Fatalf("the limit draw %s does not apply to the clean package", tag)
			}
			v := Check(t, p.Items(), Options{Named: true, Bypass: true})
			if d := Classify(p.Mistakes, v); d != nil {
				t.Errorf("divergence: %s\n%s\n%s", d.Signature(), d.Detail, p.YAML())
			}
			if len(p.Mistakes) == 0 && !v.Accepted {
				t.Errorf("at the limit, fn-validate refuses: %s", strings.Join(v.Errors, "; "))
			}
			if len(p.Mistakes) > 0 && v.Accepted {
				t.Errorf("past the limit, fn-validate accepts (BIND: %s)", failures(v))
			}
		})
	}
}
