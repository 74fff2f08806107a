package agent

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestPendingRollovers: which keys the agent starts rolling with rndc on a
// running primary.
func TestPendingRollovers(t *testing.T) {
	k, err := dnssec.Generate(&testutil.DetRand{}, "example.test.", dnssec.Spec{Role: dnssec.RoleKSK, Algorithm: dns.ECDSAP256SHA256})
	if err != nil {
		t.Fatal(err)
	}
	mount := t.TempDir()
	for name, b := range k.StageFiles(dnssec.Retiring) {
		testutil.WriteFile(t, filepath.Join(mount, name), b)
	}
	active := k.StateFile()
	cases := map[string]struct {
		reason string
		disk   []byte // named's .state; nil: the key is not in the key-directory
		want   []KeyRoll
	}{
		"start":         {reason: "the Secret retires a key named holds active", disk: active, want: []KeyRoll{{Zone: "example.test", Tag: k.Tag()}}},
		"started":       {reason: "named linked a successor already", disk: append(append([]byte{}, active...), "Successor: 1\n"...)},
		"not installed": {reason: "a key named does not hold is installed from the Secret: named rolls by itself"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			keyDir := t.TempDir()
			if tc.disk != nil {
				testutil.WriteFile(t, filepath.Join(keyDir, k.Base()+dnssec.SuffixKey), k.KeyFile())
				testutil.WriteFile(t, filepath.Join(keyDir, k.Base()+dnssec.SuffixState), tc.disk)
			}
			got, err := PendingRollovers(mount, keyDir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: PendingRollovers (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRollArgs: one rndc command per view that serves the zone as a
// primary zone; the zone alone when none is listed.
func TestRollArgs(t *testing.T) {
	r := KeyRoll{Zone: "example.test", Tag: 4711}
	zones := []layout.ZoneRef{{Zone: "example.test", View: "internal"}, {Zone: "other.test", View: "internal"}, {Zone: "example.test.", View: "external"}, {Zone: "example.test", Type: layout.ZoneTypeStub}}
	want := [][]string{
		{"dnssec", "-rollover", "-key", "4711", "example.test", "IN", "internal"},
		{"dnssec", "-rollover", "-key", "4711", "example.test", "IN", "external"},
	}
	if diff := cmp.Diff(want, RollArgs(r, zones)); diff != "" {
		t.Errorf("views (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"dnssec", "-rollover", "-key", "4711", "example.test"}}, RollArgs(r, nil)); diff != "" {
		t.Errorf("no view (-want +got):\n%s", diff)
	}
}
