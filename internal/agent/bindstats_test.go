package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

func readBindStats(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "bindstats", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func bindText(doc *BindStatsDoc) string {
	var w strings.Builder
	WriteBindMetrics(&w, doc)
	return w.String()
}

// TestWriteBindMetrics converts statistics captured from Debian's named
// 9.18 (/json/v1/server; see testdata/bindstats/README) to golden text.
func TestWriteBindMetrics(t *testing.T) {
	cases := map[string]struct {
		reason string
		file   string // "" is a channel that did not answer
	}{
		"Primary":   {reason: "a primary with queries, RRL drops, transfers, updates and a NOTIFY sent", file: "primary.json"},
		"Secondary": {reason: "a secondary that received a NOTIFY and transferred the zone", file: "secondary.json"},
		"Down":      {reason: "no answer from named is bind_up 0 and nothing else"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var doc *BindStatsDoc
			if tc.file != "" {
				var err error
				if doc, err = ParseBindStatsJSON(readBindStats(t, tc.file)); err != nil {
					t.Fatal(err)
				}
			}
			got := bindText(doc)
			golden.Check(t, filepath.Join("testdata", "golden", "bindstats-"+strings.ToLower(name)+".prom"), []byte(got))
			checkExposition(t, got)
		})
	}
}

// checkExposition checks the text format: every family has HELP and TYPE
// once, names are valid, families are contiguous and sorted, series sorted.
func checkExposition(t *testing.T, text string) {
	t.Helper()
	series := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)+\})? -?[0-9.e+]+$`)
	meta := regexp.MustCompile(`^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$`)
	seen := map[string]bool{}
	var last, lastSeries string
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if m := meta.FindStringSubmatch(line); m != nil {
			if m[1] == "HELP" {
				if seen[m[2]] {
					t.Errorf("line %d: family %s repeated", i+1, m[2])
				}
				if m[2] < last {
					t.Errorf("line %d: family %s after %s", i+1, m[2], last)
				}
				seen[m[2]], last, lastSeries = true, m[2], ""
			}
			continue
		}
		m := series.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("line %d: not a valid series: %q", i+1, line)
			continue
		}
		if m[1] != last {
			t.Errorf("line %d: series %s outside its family %s", i+1, m[1], last)
		}
		if line < lastSeries {
			t.Errorf("line %d: series not sorted", i+1)
		}
		lastSeries = line
	}
}

// TestBindStatsXMLMatchesJSON: the XML (named without json-c) and JSON of
// the same quiet named render the same metrics.
func TestBindStatsXMLMatchesJSON(t *testing.T) {
	js, err := ParseBindStatsJSON(readBindStats(t, "xmlpair.json"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseBindStatsXML(readBindStats(t, "xmlpair.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(bindText(js), bindText(x)); diff != "" {
		t.Errorf("JSON and XML render differently (-json +xml):\n%s", diff)
	}
}

// TestZoneSerials reads the zones of a real named 9.18 (testdata/bindstats
// zones.json and zones.xml, captured back to back): a loaded primary zone
// has its serial; a zone that failed to load and a secondary that has not
// transferred yet have none; BIND's builtin zones are left out. JSON and
// XML read the same.
func TestZoneSerials(t *testing.T) {
	want := []ZoneSerial{{View: "_default", Zone: "ok.test", Serial: 42}}
	js, err := ParseZoneSerialsJSON(readBindStats(t, "zones.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, js); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	x, err := ParseZoneSerialsXML(readBindStats(t, "zones.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, x); diff != "" {
		t.Errorf("XML (-want +got):\n%s", diff)
	}
	got := bindText(&BindStatsDoc{Zones: js})
	checkExposition(t, got)
	if !strings.Contains(got, "\nbind_zone_serial{view=\"_default\",zone_name=\"ok.test\"} 42\n") {
		t.Errorf("no bind_zone_serial series:\n%s", got)
	}
}

// TestHostileLabelValue: a counter name BIND reports (any string) stays
// inside its label value: quote, backslash and newline escaped by the text
// writer, invalid UTF-8 replaced.
func TestHostileLabelValue(t *testing.T) {
	// A hostile counter name stays inside its label value.
	got := bindText(&BindStatsDoc{QTypes: map[string]float64{"A\"} 1\nevil 2": 1}})
	checkExposition(t, got)
	if !strings.Contains(got, `bind_incoming_queries_total{type="A\"} 1\nevil 2"} 1`) {
		t.Errorf("hostile qtype not escaped:\n%s", got)
	}
	got = bindText(&BindStatsDoc{QTypes: map[string]float64{"A\\\xff": 1}})
	checkExposition(t, got)
	if !strings.Contains(got, "bind_incoming_queries_total{type=\"A\\\\\uFFFD\"} 1") {
		t.Errorf("backslash or invalid UTF-8 in a qtype not escaped:\n%s", got)
	}
}

func TestParseBindStatsAddr(t *testing.T) {
	cases := map[string]struct {
		reason, in, want string
		wantErr          bool
	}{
		"Default": {reason: "the rendered statistics-channels address", in: "127.0.0.1:8053", want: "127.0.0.1:8053"},
		"IPv6":    {reason: "bracketed IPv6", in: "[::1]:8053", want: "[::1]:8053"},
		"Off":     {reason: "off disables", in: "off", want: ""},
		"NoPort":  {reason: "a port is required", in: "127.0.0.1", wantErr: true},
		"BadPort": {reason: "not a port", in: "127.0.0.1:99999", wantErr: true},
		"NoHost":  {reason: "a host is required", in: ":8053", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseBindStatsAddr(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s: err = %v, wantErr %v", tc.reason, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestBindStatsFetch: a burst of scrapes asks named once; a named without
// JSON is read as XML; a dead channel is bind_up 0 within the timeout.
func TestBindStatsFetch(t *testing.T) {
	js, xmlDoc := readBindStats(t, "xmlpair.json"), readBindStats(t, "xmlpair.xml")
	jsZones, xmlZones := readBindStats(t, "zones.json"), readBindStats(t, "zones.xml")
	var hits atomic.Int32 // fetches of the server statistics (each followed by one of the zones)
	jsonOK := atomic.Bool{}
	jsonOK.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/server") {
			hits.Add(1)
		}
		switch {
		case r.URL.Path == "/json/v1/server" && jsonOK.Load():
			_, _ = w.Write(js)
		case r.URL.Path == "/json/v1/zones" && jsonOK.Load():
			_, _ = w.Write(jsZones)
		case r.URL.Path == "/xml/v3/server":
			_, _ = w.Write(xmlDoc)
		case r.URL.Path == "/xml/v3/zones":
			_, _ = w.Write(xmlZones)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	t.Run("BurstHitsOnce", func(t *testing.T) {
		hits.Store(0)
		b := &BindStats{Addr: addr, CacheFor: time.Minute}
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if b.Get(context.Background()) == nil {
					t.Error("no document")
				}
			}()
		}
		wg.Wait()
		if got := hits.Load(); got != 1 {
			t.Errorf("named was asked %d times, want 1", got)
		}
	})
	t.Run("XMLFallback", func(t *testing.T) {
		jsonOK.Store(false)
		defer jsonOK.Store(true)
		b := &BindStats{Addr: addr, CacheFor: time.Nanosecond}
		want := bindText(b.Get(context.Background()))
		if !strings.Contains(want, "bind_up 1\n") || !strings.Contains(want, `bind_zone_serial{view="_default",zone_name="ok.test"} 42`) {
			t.Errorf("XML fallback not up:\n%s", want)
		}
		hits.Store(0)
		b.Get(context.Background())
		if got := hits.Load(); got != 1 {
			t.Errorf("after the fallback named was asked %d times per scrape, want 1 (XML only)", got)
		}
	})
	t.Run("Down", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		// Accepts but never answers: the timeout must cut it short.
		defer l.Close()
		b := &BindStats{Addr: l.Addr().String(), Timeout: 200 * time.Millisecond}
		start, done := time.Now(), make(chan string, 1)
		go func() { done <- bindText(b.Get(context.Background())) }()
		var got string
		select {
		case got = <-done:
			t.Logf("scrape of a silent named returned after %s (timeout 200ms)", time.Since(start))
		case <-time.After(bindtools.Hang):
			t.Fatalf("scrape of a silent named still running after %s: the timeout did not cut it", bindtools.Hang)
		}
		if diff := cmp.Diff("# HELP bind_up 1 when BIND's statistics channel answered the last scrape.\n# TYPE bind_up gauge\nbind_up 0\n", got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestRealNamedBindStats scrapes the agent's /metrics over a real named
// with statistics-channels on a free loopback port.
func TestRealNamedBindStats(t *testing.T) {
	bindtools.RequireBIND(t)
	l, res := pod0Lab(t)
	l.writeConfig(l.fixture("named.conf.primary", nil), l.fixture("named.conf.secondary", nil), l.primaryDoc(nil))
	o := l.options(0, res)
	httpAddr := make(chan string, 1)
	o.Started = func(a string) { httpAddr <- a }
	a, _ := l.run(o)
	base := "http://" + <-httpAddr
	waitFor(t, bindtools.Hang, "primary ready", func() bool { return a.State().Snapshot().Ready })
	for range 5 {
		if got := answers(l.addr(), "www.static.test", dns.TypeA); len(got) == 0 {
			t.Fatalf("www.static.test A: no answer")
		}
	}
	if _, err := query(l.addr(), "nope.static.test", dns.TypeTXT); err != nil {
		t.Fatal(err)
	}
	var text string
	// The cache may hold a scrape from before the queries: allow a second.
	waitFor(t, bindtools.Hang, "bind_up 1 and counted A queries", func() bool {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		text = readAll(resp)
		return strings.Contains(text, "\nbind_up 1\n") && metricValue(text, `bind_incoming_queries_total{type="A"}`) >= 5 &&
			metricValue(text, `bind_responses_total{result="NXDOMAIN"}`) >= 1
	})
	for _, want := range []string{"bindfn_agent_ready 1\n", `bind_build_info{version="`, `bind_incoming_requests_total{opcode="QUERY"}`} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics has no %q:\n%s", want, text)
		}
	}
	checkExposition(t, text[strings.Index(text, "# HELP bind_up"):])
}

func readAll(resp *http.Response) string {
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// metricValue returns the value of series in text, -1 when absent.
func metricValue(text, series string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
	}
	return -1
}

func TestBindStatsFlag(t *testing.T) {
	cases := map[string]struct {
		reason  string
		args    []string
		want    string
		wantErr bool // New refuses it
	}{
		"Default":  {reason: "the rendered statistics-channels address", want: "127.0.0.1:8053"},
		"Off":      {reason: "off disables the bind_ metrics", args: []string{"--bind-stats=off"}, want: "off"},
		"Other":    {reason: "any host:port", args: []string{"--bind-stats", "[::1]:9053"}, want: "[::1]:9053"},
		"BadValue": {reason: "not host:port is a usage error", args: []string{"--bind-stats", "8053"}, want: "8053", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out strings.Builder
			o, err := ParseFlags(tc.args, func(string) string { return "lab-0" }, &out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, o.BindStats); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
			l := newLab(t)
			l.writeConfig([]byte("# p\n"), []byte("# s\n"), l.primaryDoc(nil))
			lo := l.options(0, &fakeResolver{})
			lo.Named, lo.NamedCheckconf, lo.RNDC = "true", "true", "true"
			lo.BindStats = o.BindStats
			_, err = New(lo)
			var ue *UsageError
			if tc.wantErr != errors.As(err, &ue) {
				t.Errorf("%s: New = %v, want usage error %v", tc.reason, err, tc.wantErr)
			}
		})
	}
}

// TestMetricsWithBindDown: named's channel not answering never fails the
// agent's own metrics.
func TestMetricsWithBindDown(t *testing.T) {
	s := NewState(RolePrimary, 0)
	s.Metrics().Ready.Set(1)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens: connection refused
	s.SetExtraMetrics((&BindStats{Addr: addr}).Write)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text := readAll(resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(text, "\nbindfn_agent_ready 1\n") || !strings.HasSuffix(text, "\nbind_up 0\n") {
		t.Errorf("status %d, /metrics:\n%s", resp.StatusCode, text)
	}
}
