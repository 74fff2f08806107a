package model_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// checkconfOn runs one release's named-checkconf on text and returns its
// output and verdict.
func checkconfOn(t *testing.T, r bindtools.Release, text string) (string, bool) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "named.conf")
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := r.Offline(t, "named-checkconf", conf).CombinedOutput()
	return string(out), err == nil
}

// checkconf runs every release's named-checkconf on text: the outputs, and
// whether every release accepts it.
func checkconf(t *testing.T, text string) (string, bool) {
	t.Helper()
	out, err := bindtools.OnEvery(t, func(r bindtools.Release) (string, error) {
		o, ok := checkconfOn(t, r, text)
		if !ok {
			return o, errors.New("refused")
		}
		return o, nil
	})
	return out, err == nil
}

// TestKnownOptionsBIND: every option name extraOptions accepts is one the
// real named-checkconf of every release knows in options (a bad value gives
// another error than "unknown option", and no deprecation warning), and a
// misspelt one is unknown to both; every option refused as gone in 9.20 is
// one 9.18 knows and 9.20 warns about.
func TestKnownOptionsBIND(t *testing.T) {
	bindtools.RequireBIND(t)
	names := model.KnownOptions()
	sort.Strings(names)
	if len(names) < 150 {
		t.Fatalf("only %d known options", len(names))
	}
	var b strings.Builder
	for _, n := range names {
		out, _ := checkconf(t, "options { "+n+" zz__bad { }; };\n")
		if strings.Contains(out, "unknown option") || strings.Contains(out, "deprecated") || strings.Contains(out, "obsolete") || strings.Contains(out, "no longer exists") {
			b.WriteString(n + ": " + out)
		}
	}
	if b.Len() > 0 {
		t.Errorf("options extraOptions accepts that BIND does not know:\n%s", b.String())
	}
	if out, _ := checkconf(t, "options { minimal-response yes; };\n"); strings.Count(out, "unknown option") != len(bindtools.Releases) {
		t.Errorf("named-checkconf no longer calls minimal-response unknown: %s", out)
	}
	for _, n := range model.GoneIn920() {
		if out, _ := checkconfOn(t, bindtools.BIND918, "options { "+n+" zz__bad { }; };\n"); strings.Contains(out, "unknown option") ||
			strings.Contains(out, "obsolete") || strings.Contains(out, "deprecated") {
			t.Errorf("%s, refused as gone in 9.20, is not a plain 9.18 option: %s", n, out)
		}
		if out, _ := checkconfOn(t, bindtools.BIND920, "options { "+n+" zz__bad { }; };\n"); !strings.Contains(out, "obsolete") &&
			!strings.Contains(out, "deprecated") && !strings.Contains(out, "no longer exists") {
			t.Errorf("%s, refused as gone in 9.20, is not obsolete, deprecated or removed in 9.20: %s", n, out)
		}
	}
}

// TestExtraOptionsBIND: every extraOptions entry of a list that
// ParseExtraOptions accepts, rendered, is accepted by named-checkconf; the
// shapes it refuses named-checkconf refuses too.
func TestExtraOptionsBIND(t *testing.T) {
	bindtools.RequireBIND(t)
	for _, tc := range []struct {
		entry string
		ok    bool
	}{
		{"minimal-responses yes # trailing comment", true},
		{"minimal-responses no-auth-recursive", true},
		{"ixfr-from-differences primary", true},
		{"zone-statistics terse", true},
		{"prefetch 2 9", true},
		{"fetches-per-zone 400 drop", true},
		{"max-cache-size 64m // cache", true},
		{"max-cache-ttl PT1H", true},
		{"lame-ttl 10m", true},
		{"max-journal-size unlimited", true},
		{"max-ixfr-ratio 50%", true},
		{"server-id \"ns1\"", true},
		{"blackhole { 192.0.2.0/24; }", true},
		{"minimal-response yes", false},
		{"minimal-any maybe", false},
		{"tcp-listen-queue ten", false},
		{"server-id ns1", false},
		{"max-cache-ttl P1H", false},
		{"max-cache-size 64q", false},
		{"lmdb-mapsize default", false},
	} {
		var rs diag.Results
		stmts := model.ParseExtraOptions(diag.Source{}, []string{tc.entry}, &rs)
		if rs.HasErrors() {
			if tc.ok {
				t.Errorf("%q: refused (%v), want accepted", tc.entry, rs)
			}
			// BIND must refuse it too: the entry as written, with ';'
			// (one release refusing is enough: one config serves both).
			if out, ok := checkconf(t, "options { "+tc.entry+"\n; };\n"); ok {
				t.Errorf("%q: we refuse it, named-checkconf accepts it: %s", tc.entry, out)
			}
			continue
		}
		if !tc.ok {
			t.Errorf("%q: accepted, want refused", tc.entry)
		}
		text, err := nc.Format(nc.B([]nc.Word{nc.Kw("options")}, stmts...))
		if err != nil {
			t.Fatal(err)
		}
		if out, ok := checkconf(t, string(text)); !ok {
			t.Errorf("%q: accepted and rendered as\n%s\nnamed-checkconf refuses it: %s", tc.entry, text, out)
		}
	}
}

// TestExtraOptionRangesBIND: for every option with a range, the value at
// each end is accepted by extraOptions and by named-checkconf, and the
// value one past it refused by both (docs/validation.md: BIND's limits).
func TestExtraOptionRangesBIND(t *testing.T) {
	bindtools.RequireBIND(t)
	for _, name := range model.RangedOptions() {
		lo, hi, zero := model.OptionRange(name)
		values := []uint64{lo, hi}
		if lo > 0 && !(zero && lo == 1) {
			values = append(values, lo-1)
		}
		if hi < 1<<32-1 {
			values = append(values, hi+1)
		}
		for _, v := range values {
			entry := fmt.Sprintf("%s %d", name, v)
			var rs diag.Results
			model.ParseExtraOptions(diag.Source{}, []string{entry}, &rs)
			fn := !rs.HasErrors()
			out, bind := checkconf(t, "options { "+entry+"; };\n")
			if bind && !fn && strings.Contains(out, "is obsolete") {
				continue // 9.20 ignores the option; the range is 9.18's
			}
			if fn != bind {
				t.Errorf("%s: extraOptions accepted=%v, named-checkconf accepted=%v (%s; %v)", entry, fn, bind, strings.TrimSpace(out), rs)
			}
		}
	}
}
