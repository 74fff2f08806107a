package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestWriteSignatureMetrics: one series per zone, through client_golang;
// nothing at all without signed zones.
func TestWriteSignatureMetrics(t *testing.T) {
	var w strings.Builder
	WriteSignatureMetrics(&w, nil)
	if w.Len() != 0 {
		t.Errorf("no signed zones wrote %q", w.String())
	}
	WriteSignatureMetrics(&w, map[string]time.Time{"b.test": time.Unix(200, 0), "a.test": time.Unix(100, 0)})
	want := "# HELP bindfn_agent_zone_signature_expiry_timestamp_seconds Unix time the earliest RRSIG over a signed zone's SOA or DNSKEY RRset, as named serves it, expires; no series for a zone named does not answer signed.\n" +
		"# TYPE bindfn_agent_zone_signature_expiry_timestamp_seconds gauge\n" +
		"bindfn_agent_zone_signature_expiry_timestamp_seconds{zone=\"a.test\"} 100\n" +
		"bindfn_agent_zone_signature_expiry_timestamp_seconds{zone=\"b.test\"} 200\n"
	if diff := cmp.Diff(want, w.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestRealNamedSignatureExpiry asks a real named that signs one zone with
// 3-day signatures (dnssec-policy) and serves another unsigned: the signed
// zone's earliest SOA/DNSKEY signature expires about 3 days from now; the
// unsigned zone and a zone named does not serve have no series.
func TestRealNamedSignatureExpiry(t *testing.T) {
	named := bindtools.BINDPath(t, "named")
	dir := t.TempDir()
	port := bindtools.FreePort(t)
	if err := os.Mkdir(filepath.Join(dir, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`options { directory %[1]q; listen-on port %[2]d { 127.0.0.1; }; listen-on-v6 { none; }; pid-file none; };
dnssec-policy "short" { keys { csk lifetime unlimited algorithm 13; }; signatures-validity 3d; signatures-refresh 1d; signatures-validity-dnskey 3d; };
zone "signed.test" { type primary; file "signed.zone"; dnssec-policy "short"; inline-signing yes; key-directory %[3]q; };
zone "plain.test" { type primary; file "plain.zone"; };
`, dir, port, filepath.Join(dir, "keys"))
	zone := "$TTL 60\n@ SOA ns hm 1 3600 600 86400 60\n@ NS ns\nns A 127.0.0.1\n"
	for name, body := range map[string]string{"named.conf": conf, "signed.zone": zone, "plain.zone": zone} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(named, "-g", "-c", filepath.Join(dir, "named.conf"), "-u", "root")
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	s := &SignatureExpiry{Addr: fmt.Sprintf("127.0.0.1:%d", port), Zones: func() []string { return []string{"signed.test", "plain.test", "missing.test"} }, CacheFor: time.Nanosecond}
	var got map[string]time.Time
	waitFor(t, bindtools.Hang, "signed.test signed", func() bool {
		got = s.Get(context.Background())
		return len(got) > 0
	})
	now := time.Now()
	if len(got) != 1 {
		t.Fatalf("want signed.test alone, got %v\nnamed's log:\n%s", got, log.String())
	}
	exp, ok := got["signed.test"]
	if !ok {
		t.Fatalf("no signed.test in %v", got)
	}
	// signatures-validity 3d, less BIND's jitter; the inception is an hour back.
	if lo, hi := now.Add(2*24*time.Hour), now.Add(3*24*time.Hour+time.Minute); exp.Before(lo) || exp.After(hi) {
		t.Errorf("signed.test expires %s, want between %s and %s", exp, lo, hi)
	}
	t.Logf("signed.test's earliest SOA/DNSKEY signature expires in %s", exp.Sub(now).Round(time.Minute))
}
