package validate_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// verdict runs the pipeline on a YAML package: accepted (no error), and
// when accepted every rendered named.conf passes named-checkconf -z.
func verdict(t *testing.T, pkg string) bool {
	t.Helper()
	items, err := testutil.DecodeItems("in.yaml", []byte(pkg))
	if err != nil {
		t.Fatal(err)
	}
	objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		return false
	}
	for cname, c := range testutil.Clusters(t, objs) {
		root := t.TempDir()
		testutil.LayPod(t, root, c)
		for _, f := range []string{layout.NamedConfPrimary, layout.NamedConfSecondary} {
			if o, err := bindtools.NamedCheckconf(t, root, layout.ConfigFile(f)); err != nil {
				t.Errorf("%s %s: accepted, but named-checkconf -z refuses the render: %v\n%s", cname, f, err, o)
			}
		}
	}
	return true
}

// checkconfAccepts reports whether named-checkconf accepts conf.
func checkconfAccepts(t *testing.T, conf string) (bool, string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "named.conf")
	if err := os.WriteFile(f, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := bindtools.Offline(t, bindtools.BINDPath(t, "named-checkconf"), f).CombinedOutput()
	return err == nil, string(out)
}

// TestRateLimitBIND: fn-validate accepts a rate-limit value exactly when
// named-checkconf does (responses-per-second over 1000 was once accepted
// and named refused the config).
func TestRateLimitBIND(t *testing.T) {
	bindtools.RequireBIND(t)
	for name, tc := range map[string]struct {
		reason string
		spec   string // BindCluster spec.rateLimit
		bind   string // the same in named.conf
	}{
		"rps-1000":    {"DNS_RRL_MAX_RATE", "{responsesPerSecond: 1000}", "responses-per-second 1000;"},
		"rps-1001":    {"one past DNS_RRL_MAX_RATE", "{responsesPerSecond: 1001}", "responses-per-second 1001;"},
		"window-3600": {"DNS_RRL_MAX_WINDOW", "{responsesPerSecond: 5, window: 3600}", "responses-per-second 5; window 3600;"},
		"window-3601": {"one past DNS_RRL_MAX_WINDOW", "{responsesPerSecond: 5, window: 3601}", "responses-per-second 5; window 3601;"},
		"slip-10":     {"DNS_RRL_MAX_SLIP", "{responsesPerSecond: 5, slip: 10}", "responses-per-second 5; slip 10;"},
		"slip-11":     {"one past DNS_RRL_MAX_SLIP", "{responsesPerSecond: 5, slip: 11}", "responses-per-second 5; slip 11;"},
		"slip-0":      {"slip 0 never slips", "{responsesPerSecond: 5, slip: 0}", "responses-per-second 5; slip 0;"},
	} {
		t.Run(name, func(t *testing.T) {
			pkg := testutil.Lines(
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindCluster", "metadata: {name: dns, namespace: dns}",
				"spec: {replicas: 2, rateLimit: "+tc.spec+"}", "---",
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindZone", "metadata: {name: z, namespace: dns}",
				"spec: {clusterRef: dns, zoneName: example.com, nameservers: [ns1.example.net.]}",
			)
			fn := verdict(t, pkg)
			bind, out := checkconfAccepts(t, "options { rate-limit { "+tc.bind+" }; };\n")
			if fn != bind {
				t.Errorf("%s: fn-validate accepted=%v, named-checkconf accepted=%v (%s)", tc.reason, fn, bind, strings.TrimSpace(out))
			}
		})
	}
}

// namedLoads starts named on one zone (no listeners, no network) with the
// given options and reports whether it loaded the zone, and its log. The
// wait is a bound against hanging, not a measurement.
func namedLoads(t *testing.T, options, zone string) (bool, string) {
	t.Helper()
	dir := t.TempDir()
	conf := fmt.Sprintf(`options { directory %q; pid-file none; listen-on { none; }; listen-on-v6 { none; }; recursion no; %s };
controls { };
zone "example.com" { type primary; file "db"; };
`, dir, options)
	testutil.WriteFile(t, filepath.Join(dir, "named.conf"), []byte(conf))
	testutil.WriteFile(t, filepath.Join(dir, "db"), []byte(zone))
	cmd := bindtools.Offline(t, bindtools.BINDPath(t, "named"), "-g", "-u", "root", "-c", filepath.Join(dir, "named.conf"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	done := make(chan string, 1)
	go func() {
		var log strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "all zones loaded") || strings.Contains(sc.Text(), "exiting") {
				break
			}
		}
		done <- log.String()
	}()
	select {
	case log := <-done:
		return strings.Contains(log, "zone example.com/IN: loaded serial"), log
	case <-time.After(2 * time.Minute):
		t.Fatal("named did not finish loading within 2 minutes")
	}
	return false, ""
}

// TestZoneLimitsBIND: fn-validate accepts an RRset size, and a number of
// types at one name, exactly when named loads the zone, with BIND's
// defaults (max-records-per-type, max-types-per-name) and with the
// option set through extraOptions (named-checkzone and named-checkconf -z
// pass an RRset of 101 records; named refuses it).
func TestZoneLimitsBIND(t *testing.T) {
	bindtools.RequireBIND(t)
	for name, tc := range map[string]struct {
		reason string
		n      int
		option string // an extraOptions entry, or none
		types  bool   // n types at one name instead of n records of one type
	}{
		"100":              {"at the default limit", 100, "", false},
		"101":              {"one past the default", 101, "", false},
		"101-raised":       {"raised to 200", 101, "max-records-per-type 200", false},
		"101-unlimited":    {"0 lifts the limit", 101, "max-records-per-type 0", false},
		"51-lowered":       {"lowered to 50", 51, "max-records-per-type 50", false},
		"types-100":        {"100 types at one name (max-types-per-name)", 100, "", true},
		"types-101":        {"101 types at one name", 101, "", true},
		"types-101-raised": {"101 types, max-types-per-name 101", 101, "max-types-per-name 101", true},
	} {
		t.Run(name, func(t *testing.T) {
			var vals, recs, zone strings.Builder
			zone.WriteString("$TTL 300\n@ SOA ns1.example.net. hostmaster 1 3600 600 604800 300\n@ NS ns1.example.net.\n")
			for i := range tc.n {
				if tc.types {
					fmt.Fprintf(&recs, "{name: big, type: TYPE%d, values: ['\\# 0']},", 65280+i)
					fmt.Fprintf(&zone, "big TYPE%d \\# 0\n", 65280+i)
					continue
				}
				ip := fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)
				fmt.Fprintf(&vals, "'%s',", ip)
				fmt.Fprintf(&zone, "big A %s\n", ip)
			}
			records := "{name: big, type: A, values: [" + strings.TrimSuffix(vals.String(), ",") + "]}"
			if tc.types {
				records = strings.TrimSuffix(recs.String(), ",")
			}
			extra, opt := "", ""
			if tc.option != "" {
				extra, opt = ", extraOptions: ['"+tc.option+"']", tc.option+";"
			}
			pkg := testutil.Lines(
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindCluster", "metadata: {name: dns, namespace: dns}",
				"spec: {replicas: 1"+extra+"}", "---",
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindZone", "metadata: {name: z, namespace: dns}",
				"spec: {clusterRef: dns, zoneName: example.com, nameservers: [ns1.example.net.], records: ["+records+"]}",
			)
			fn := verdict(t, pkg)
			bind, log := namedLoads(t, opt, zone.String())
			if fn != bind {
				t.Errorf("%s: fn-validate accepted=%v, named loaded the zone=%v\n%s", tc.reason, fn, bind, log)
			}
		})
	}
}
