package model_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestParseDurationBIND asks the real named-checkconf about every duration
// of a list: whatever ParseDuration accepts BIND accepts, and whatever BIND
// refuses ParseDuration refuses. The forms BIND reads that we refuse are
// listed in docs/validation.md, and here.
func TestParseDurationBIND(t *testing.T) {
	bindtools.RequireBIND(t)
	refusedOnPurpose := map[string]bool{"P": true, "PT": true, "P1DT": true, "1d": true, "3600": true, "1w2d": true}
	for _, d := range []string{
		"PT1H", "p1d", "P2W", "P1Y2M3DT4H5M6S", "PT30M", "P1M", "P4294967295Y", "PT0S",
		"P1H", "PT5D", "P1W2D", "PT1H1D", "P1W1D", "PT1W", "P1DT1W", "P1S", "P1D5", "PX", "P1.5D",
		"P", "PT", "P1DT", "1d", "3600", "1w2d",
	} {
		dir := t.TempDir()
		conf := filepath.Join(dir, "named.conf")
		if err := os.WriteFile(conf, []byte(fmt.Sprintf("dnssec-policy \"p\" { dnskey-ttl %s; };\n", d)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := bindtools.OnEvery(t, func(r bindtools.Release) (string, error) {
			o, err := r.Offline(t, "named-checkconf", conf).CombinedOutput()
			return string(o), err
		})
		bind := err == nil
		_, perr := model.ParseDuration(d, false)
		ours := perr == nil
		switch {
		case ours && !bind:
			t.Errorf("%q: we accept it, named-checkconf refuses it: %s", d, out)
		case !ours && bind && !refusedOnPurpose[d]:
			t.Errorf("%q: we refuse it (%v), named-checkconf accepts it; accept it or document it", d, perr)
		}
	}
}

// TestParseBINDDurationBIND: ParseBINDDuration (what bind-fn import reads
// an existing named.conf with) accepts exactly the TTL-style durations
// named-checkconf accepts, with the seconds named-checkconf -p prints.
func TestParseBINDDurationBIND(t *testing.T) {
	bindtools.RequireBIND(t)
	for _, d := range []string{"5d", "1h30m", "1w2d", "3600", "1H", "1h1h", "0", "90s", "2W", "1d2", "5x", "d", "1.5d", "-1d", "1d 2h"} {
		dir := t.TempDir()
		conf := filepath.Join(dir, "named.conf")
		if err := os.WriteFile(conf, []byte(fmt.Sprintf("dnssec-policy \"p\" { dnskey-ttl %s; };\n", d)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := bindtools.Offline(t, bindtools.BINDPath(t, "named-checkconf"), "-p", conf).CombinedOutput()
		got, perr := model.ParseBINDDuration(d, false)
		switch {
		case err != nil && perr == nil:
			t.Errorf("%q: we accept it (%d s), named-checkconf refuses it: %s", d, got.Seconds, out)
		case err == nil && perr != nil:
			t.Errorf("%q: we refuse it (%v), named-checkconf accepts it: %s", d, perr, out)
		case err == nil:
			var secs uint64
			if _, serr := fmt.Sscanf(strings.TrimSpace(strings.SplitN(string(out), "dnskey-ttl", 2)[1]), "%d;", &secs); serr != nil {
				t.Fatalf("%q: cannot read named-checkconf -p: %s", d, out)
			}
			if secs != got.Seconds {
				t.Errorf("%q: we read %d seconds (%s), BIND %d", d, got.Seconds, got.Text, secs)
			}
			if iso, _ := model.ParseDuration(got.Text, false); iso.Seconds != secs {
				t.Errorf("%q: its ISO form %s is %d seconds, BIND reads %d", d, got.Text, iso.Seconds, secs)
			}
		}
	}
}
