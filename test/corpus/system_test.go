package corpus

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

var systemDir = filepath.Join("testdata", "isc", Commit, "system")

// EnvSystemFull runs TestSystemZones' self-check on every zone of the
// system-test corpus; by default it runs on systemSample.
const EnvSystemFull = "BINDFN_CORPUS_FULL"

// systemZone is one row of system/index.tsv (copy.sh): a zone file a
// named.conf of ISC's system tests names, and the zone's origin.
type systemZone struct {
	file, origin, test, source string
}

func (z systemZone) key() string { return z.file + " " + z.origin }

func systemIndex(t *testing.T) []systemZone {
	t.Helper()
	f, err := os.Open(filepath.Join(systemDir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []systemZone
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		c := strings.Split(sc.Text(), "\t")
		if first {
			continue
		}
		if len(c) != 4 {
			t.Fatalf("index.tsv: %q: want file, origin, test, source", sc.Text())
		}
		out = append(out, systemZone{c[0], c[1], c[2], c[3]})
	}
	if err := sc.Err(); err != nil || len(out) == 0 {
		t.Fatalf("index.tsv: %d zones: %v", len(out), err)
	}
	return out
}

// systemSample: the zones self-checked by default, the first of each test
// directory in the index, so that every test's kind of zone is read back.
func systemSample(zs []systemZone) map[string]bool {
	s := map[string]bool{}
	seen := map[string]bool{}
	for _, z := range zs {
		if !seen[z.test] {
			seen[z.test] = true
			s[z.key()] = true
		}
	}
	return s
}

// batchLoad asks one release's named-checkconf -z about many zone files at
// once: each zone in a view of its own (so that origins may repeat), files
// relative to dir. It returns, per zone, whether it loaded and BIND's lines
// about it.
func batchLoad(t *testing.T, v bindtools.Release, dir string, zones []systemZone, files []string) (map[int]bool, map[int]string) {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "options { directory %q; };\n", abs)
	for i, z := range zones {
		fmt.Fprintf(&b, "view \"z%d\" { zone %q { type primary; file %q; }; };\n", i, z.origin, files[i])
	}
	conf := filepath.Join(t.TempDir(), "named.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := run(t, v.Offline(t, "named-checkconf", "-z", conf))
	ok := map[int]bool{}
	msgs := map[int]string{}
	// Zones are loaded in the configuration's order; each one's lines end
	// with "loaded serial" or "not loaded due to errors". The failures are
	// then listed as view/zone/class: result, which is the verdict.
	var chunk strings.Builder
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if l == "" {
			continue
		}
		if view, _, found := strings.Cut(l, "/"); found && strings.HasPrefix(view, "z") && !strings.HasPrefix(l, "zone ") {
			var i int
			if _, err := fmt.Sscanf(view, "z%d", &i); err == nil {
				ok[i] = false
				continue
			}
		}
		chunk.WriteString(l + "\n")
		if strings.Contains(l, ": loaded serial ") || strings.HasSuffix(l, ": not loaded due to errors.") {
			msgs[n] = chunk.String()
			chunk.Reset()
			n++
		}
	}
	if n != len(zones) {
		t.Fatalf("%s named-checkconf -z: %d zones reported, want %d:\n%s", v, n, len(zones), out)
	}
	for i := range zones {
		if _, failed := ok[i]; !failed {
			ok[i] = true
		}
	}
	return ok, msgs
}

// batchDump is BIND's canonical dump (named-checkzone -D) of many zone
// files on one release, in one process tree: file names relative to dir;
// a zone BIND refuses has no dump.
func batchDump(t *testing.T, v bindtools.Release, dir string, origins, files []string) map[int]string {
	t.Helper()
	out := t.TempDir()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cd %s || exit 1\n", shq(abs))
	prog := v.Prog(t, "named-checkzone")
	for i := range files {
		fmt.Fprintf(&b, "%s -D -o %s/%d %s %s >/dev/null 2>&1 || rm -f %s/%d\n", prog, shq(out), i, shq(origins[i]), shq(files[i]), shq(out), i)
	}
	script := filepath.Join(out, "dump.sh")
	if err := os.WriteFile(script, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The release's own Argv around /bin/sh: the script runs behind the
	// release's /usr mount, off the network.
	argv := v.Argv(t, true, "named-checkzone")
	argv = append(argv[:len(argv)-1], "/bin/sh", script)
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = append(os.Environ(), v.Env(t)...)
	if o, ok := run(t, c); !ok {
		t.Fatalf("%s dump script: %s", v, o)
	}
	dumps := map[int]string{}
	for i := range files {
		if d, err := os.ReadFile(filepath.Join(out, fmt.Sprint(i))); err == nil {
			dumps[i] = string(d)
		}
	}
	return dumps
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestSystemZones: for every zone file ISC's system tests load (copy.sh's
// index), fn-validate's verdict on the converted package equals BIND's
// verdict on the file, on 9.18 and 9.20, or the difference is in
// docs/validation.md's table (knownDiffs). Where fn-validate accepts, the rendered zone loads;
// where both accept, BIND reads the same records from the file and from the
// render (systemSample by default, every zone with BINDFN_CORPUS_FULL=1).
// BIND is asked in batches (one named-checkconf -z per release and kind).
func TestSystemZones(t *testing.T) {
	bindtools.RequireRoot(t)
	var rels []bindtools.Release
	for _, r := range bindtools.Releases {
		bindtools.RequireRelease(t, r)
		rels = append(rels, r)
	}
	zs := systemIndex(t)
	full := os.Getenv(EnvSystemFull) == "1"
	sample := systemSample(zs)
	files := make([]string, len(zs))
	origins := make([]string, len(zs))
	for i, z := range zs {
		files[i], origins[i] = z.file, z.origin
	}

	// Conversion: as written, or from BIND 9.18's dump where the API
	// cannot hold a directive of the file.
	convs := make([]*Zone, len(zs))
	cerrs := make([]error, len(zs))
	var redo []int
	for i, z := range zs {
		data, err := os.ReadFile(filepath.Join(systemDir, z.file))
		if err != nil {
			t.Fatal(err)
		}
		convs[i], cerrs[i] = ConvertZone(z.origin, string(data))
		if errors.Is(cerrs[i], ErrInexpressible) {
			redo = append(redo, i)
		}
	}
	ro, rf := make([]string, len(redo)), make([]string, len(redo))
	for j, i := range redo {
		ro[j], rf[j] = origins[i], files[i]
	}
	dumps918 := batchDump(t, rels[0], systemDir, ro, rf)
	for j, i := range redo {
		if d, ok := dumps918[j]; ok {
			convs[i], cerrs[i] = ConvertDump(origins[i], d)
		}
	}

	// fn-validate's verdicts.
	objs := make([][]render.Object, len(zs))
	results := make([]diag.Results, len(zs))
	fnOK := make([]bool, len(zs))
	timers := make([]bool, len(zs))
	for i := range zs {
		if cerrs[i] != nil {
			continue
		}
		objs[i], results[i] = fnVerdict(t, convs[i])
		fnOK[i] = !results[i].HasErrors()
		if !fnOK[i] && onlySOATimers(results[i]) {
			timers[i] = true
			objs[i], results[i] = fnVerdict(t, convs[i].WithDefaultTimers())
			fnOK[i] = !results[i].HasErrors()
		}
	}

	// The renders of accepted packages, laid out for BIND.
	renderDir := t.TempDir()
	var acc []int
	for i := range zs {
		if fnOK[i] {
			acc = append(acc, i)
			text := renderedZone(t, objs[i], origins[i])
			if err := os.WriteFile(filepath.Join(renderDir, fmt.Sprintf("%d.db", i)), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	accZones := make([]systemZone, len(acc))
	accFiles := make([]string, len(acc))
	for j, i := range acc {
		accZones[j], accFiles[j] = zs[i], fmt.Sprintf("%d.db", i)
	}

	counts := map[string]map[string]int{}
	for _, v := range rels {
		c := map[string]int{}
		counts[v.Name] = c
		bindOK, msgs := batchLoad(t, v, systemDir, zs, files)
		renderOK, renderMsgs := batchLoad(t, v, renderDir, accZones, accFiles)
		// Self-check: the zones both accept (the sample, or all).
		var sc []int
		for _, i := range acc {
			if bindOK[i] && (full || sample[zs[i].key()]) {
				sc = append(sc, i)
			}
		}
		so, sf, rfiles := make([]string, len(sc)), make([]string, len(sc)), make([]string, len(sc))
		for j, i := range sc {
			so[j], sf[j], rfiles[j] = origins[i], files[i], fmt.Sprintf("%d.db", i)
		}
		want := batchDump(t, v, systemDir, so, sf)
		got := batchDump(t, v, renderDir, so, rfiles)
		for j, i := range acc {
			if !renderOK[j] {
				t.Errorf("%s %s (%s): fn-validate accepts the package, but BIND refuses its rendered zone:\n%s", v.Name, zs[i].file, zs[i].origin, renderMsgs[j])
			}
		}
		for j, i := range sc {
			z := zs[i]
			d := cmp.Diff(dumpRecords(want[j], z.origin), dumpRecords(got[j], z.origin))
			switch why, listed := knownWhy(t, "systemself", z.key()); {
			case d == "" && listed:
				t.Errorf("%s: listed in docs/validation.md's table (systemself) (%s), but BIND reads the same records: remove it", z.key(), why)
			case listed:
				c["self-check differs, listed"]++
			case d != "":
				t.Errorf("%s %s: BIND reads other records from the rendered zone than from the file (-file +render):\n%s", v.Name, z.key(), d)
			default:
				c["self-check same records"]++
			}
		}
		for i, z := range zs {
			known, listed := knownDiffs(t, "system")[z.key()]
			isListed := listed && contains(known.versions, v.Name)
			switch b := bindOK[i]; {
			case b == fnOK[i] && isListed:
				t.Errorf("%s %s: listed as a known difference (%s), but BIND and fn-validate agree (loads: %v): remove it", v.Name, z.key(), known.reason, b)
			case b == fnOK[i]:
				c["agree"]++
				if !b {
					c["agree, both refuse"]++
				}
				if cerrs[i] != nil {
					c["agree, the converter cannot read it either"]++
				}
				if convs[i] != nil && convs[i].FromDump {
					c["agree, converted from BIND's dump"]++
				}
				if timers[i] {
					c["agree, SOA timers refused on purpose"]++
				}
			case isListed:
				c["listed"]++
			case b && cerrs[i] != nil:
				c["false refusal (converter)"]++
				t.Errorf("%s %s: BIND loads it, but the converter cannot: %v", v.Name, z.key(), cerrs[i])
			case b:
				c["false refusal"]++
				t.Errorf("%s %s: BIND loads it, fn-validate refuses the package:\n%s", v.Name, z.key(), errorsOf(results[i]))
			default:
				c["false acceptance"]++
				t.Errorf("%s %s: BIND refuses it, fn-validate accepts the package\nBIND: %s", v.Name, z.key(), msgs[i])
			}
		}
	}
	for k := range knownDiffs(t, "system") {
		found := false
		for _, z := range zs {
			found = found || z.key() == k
		}
		if !found {
			t.Errorf("docs/validation.md's table lists %s, which is not in the index", k)
		}
	}
	// The stated classes around the verdicts: zones whose packages carry
	// DNSSEC records, and the system-test zone files copy.sh did not take.
	dnssec := 0
	for _, z := range convs {
		if z != nil && hasDNSSEC(z) {
			dnssec++
		}
	}
	t.Logf("%d zones' packages carry DNSSEC records (RRSIG, NSEC, NSEC3, DNSKEY, DS ...) as written; files not taken (skipped.tsv): %v", dnssec, skippedReasons(t))
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%s: %d zones (self-check on %s): %v", k, len(zs), map[bool]string{true: "all", false: fmt.Sprintf("the sample of %d", len(sample))}[full], counts[k])
	}
}

// hasDNSSEC reports whether the package holds a DNSSEC record.
func hasDNSSEC(z *Zone) bool {
	for _, r := range z.Zone.Spec.Records {
		switch strings.ToUpper(r.Type) {
		case "RRSIG", "NSEC", "NSEC3", "NSEC3PARAM", "DNSKEY", "DS", "CDS", "CDNSKEY", "SIG", "KEY", "NXT":
			return true
		}
	}
	return false
}

// skippedReasons counts system/skipped.tsv by reason.
func skippedReasons(t *testing.T) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(systemDir, "skipped.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if _, why, ok := strings.Cut(l, "\t"); ok && i > 0 {
			out[why]++
		}
	}
	return out
}
