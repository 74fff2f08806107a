package dnssec_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// writeStage writes k's files for stage s under BIND's names.
func writeStage(t *testing.T, dir string, k *dnssec.Key, s dnssec.Stage) {
	t.Helper()
	for name, b := range k.StageFiles(s) {
		for _, suf := range []string{dnssec.SuffixKey, dnssec.SuffixPrivate, dnssec.SuffixState} {
			if strings.HasSuffix(name, suf) {
				testutil.WriteFile(t, filepath.Join(dir, k.Base()+suf), b)
			}
		}
	}
}

// TestStageFiles: each stage's files parse back to the same key and role,
// and say their stage: a retiring key is retired at Epoch in its .state
// and .private, a successor has a Created time alone and every state
// hidden.
func TestStageFiles(t *testing.T) {
	k, err := dnssec.Generate(&testutil.DetRand{}, "example.test.", spec(dnssec.RoleKSK, dns.ECDSAP256SHA256, 0))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		stage  dnssec.Stage
		want   []string // lines the stage's files hold
		not    []string // lines they must not hold
	}{
		"active":    {"in use since Epoch", dnssec.Active, []string{"Active: 20000101000000", "GoalState: omnipresent"}, []string{"Retired:", "Inactive:"}},
		"retiring":  {"named rolls a key retired at Epoch at once", dnssec.Retiring, []string{"Retired: 20000101000000", "Inactive: 20000101000000", "DSState: omnipresent"}, nil},
		"successor": {"dst_key_is_unused: Created alone, states hidden", dnssec.Successor, []string{"Generated: 20000101000000", "DNSKEYState: hidden", "DSState: hidden", "GoalState: hidden"}, []string{"Publish:", "Activate:", "Active:", "Published:"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files := k.StageFiles(tc.stage)
			var all []byte
			for _, b := range files {
				all = append(all, b...)
			}
			for _, w := range tc.want {
				if !bytes.Contains(all, []byte(w)) {
					t.Errorf("%s: no %q in the files", tc.reason, w)
				}
			}
			for _, w := range tc.not {
				if bytes.Contains(all, []byte("\n"+w)) || bytes.HasPrefix(all, []byte(w)) {
					t.Errorf("%s: %q in the files", tc.reason, w)
				}
			}
			keys, probs := dnssec.Parse(files)
			if len(probs) != 0 || len(keys) != 1 {
				t.Fatalf("%s: Parse = %d keys, problems %v", tc.reason, len(keys), probs)
			}
			if diff := cmp.Diff(k.DNSKEY.String(), keys[0].DNSKEY.String()); diff != "" || keys[0].Role != dnssec.RoleKSK {
				t.Errorf("%s: read back role %q, DNSKEY (-want +got):\n%s", tc.reason, keys[0].Role, diff)
			}
		})
	}
}

// TestBINDRollsRetiringKey: named of each release, started on a
// key-directory holding a rendered rollover (the KSK at stage Retiring,
// its successor at stage Successor, the ZSK active), rolls the KSK by
// itself (no rndc): it selects the successor, links the two keys and
// publishes the successor, and makes no key of its own. This is how a
// primary whose volume was lost resumes a rollover from the Secret.
func TestBINDRollsRetiringKey(t *testing.T) {
	for _, r := range bindtools.Releases {
		t.Run(r.Name, func(t *testing.T) {
			bindtools.RequireRelease(t, r)
			dir := t.TempDir()
			keyDir := filepath.Join(dir, "keys")
			specs := []dnssec.Spec{spec(dnssec.RoleKSK, dns.ECDSAP256SHA256, 0), spec(dnssec.RoleZSK, dns.ECDSAP256SHA256, 0)}
			keys, _, err := dnssec.ZoneKeys("example.test.", specs, nil, &testutil.DetRand{})
			if err != nil {
				t.Fatal(err)
			}
			var ksk *dnssec.Key
			for _, k := range keys {
				st := dnssec.Active
				if k.SEP() {
					ksk, st = k, dnssec.Retiring
				}
				writeStage(t, keyDir, k, st)
			}
			succ, err := dnssec.Generate(bytes.NewReader(bytes.Repeat([]byte{77}, 64)), "example.test.", specs[0])
			if err != nil {
				t.Fatal(err)
			}
			writeStage(t, keyDir, succ, dnssec.Successor)
			port := bindtools.FreePort(t)
			testutil.WriteFile(t, filepath.Join(dir, "db"), []byte("$TTL 300\n@ SOA ns hm 1 300 60 1209600 60\n@ NS ns\nns A 127.0.0.1\nwww A 192.0.2.1\n"))
			testutil.WriteFile(t, filepath.Join(dir, "named.conf"), []byte(fmt.Sprintf(`options { directory %q; listen-on port %d { 127.0.0.1; }; listen-on-v6 { none; }; pid-file none; recursion no; };
controls { };
dnssec-policy "p" { keys { ksk lifetime unlimited algorithm ecdsap256sha256; zsk lifetime unlimited algorithm ecdsap256sha256; }; };
zone "example.test" { type primary; file "db"; dnssec-policy "p"; inline-signing yes; key-directory %q; };
`, dir, port, keyDir)))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var log syncBuffer
			argv := r.Argv(t, false, "named", "-g", "-c", filepath.Join(dir, "named.conf"))
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), r.Env(t)...)
			cmd.Stdout, cmd.Stderr = &log, &log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cancel(); _ = cmd.Wait() }()
			selected := fmt.Sprintf("example.test/ECDSAP256SHA256/%d (KSK) selected for policy p", succ.Tag())
			want := []string{fmt.Sprint(keys[0].Tag()), fmt.Sprint(keys[1].Tag()), fmt.Sprint(succ.Tag())}
			if err := waitFor(func() error {
				if !strings.Contains(log.String(), selected) {
					return fmt.Errorf("named did not log %q", selected)
				}
				if got := dnskeyTags("127.0.0.1:" + fmt.Sprint(port)); !cmp.Equal(sortedStrings(want), sortedStrings(got)) {
					return fmt.Errorf("named serves DNSKEYs %v, want %v", got, want)
				}
				return nil
			}); err != nil {
				t.Fatalf("%v\nnamed log:\n%s", err, log.String())
			}
			st, err := os.ReadFile(filepath.Join(keyDir, ksk.Base()+dnssec.SuffixState))
			if err != nil {
				t.Fatal(err)
			}
			if link := fmt.Sprintf("Successor: %d\n", succ.Tag()); !strings.Contains(string(st), link) {
				t.Errorf("named did not link the retiring KSK to the successor (%q):\n%s", link, st)
			}
			if strings.Contains(log.String(), "created for policy") {
				t.Errorf("named made a key of its own:\n%s", log.String())
			}
		})
	}
}

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestNeedsRollover: the agent's one rndc call per rollover: when the
// Secret retires a key that named, on its volume, has not begun to roll.
func TestNeedsRollover(t *testing.T) {
	k, err := dnssec.Generate(&testutil.DetRand{}, "example.test.", spec(dnssec.RoleKSK, dns.ECDSAP256SHA256, 0))
	if err != nil {
		t.Fatal(err)
	}
	retiring := k.StageFiles(dnssec.Retiring)[k.SecretKey(dnssec.SuffixState)]
	active := k.StateFile()
	rolling := append(bytes.Clone(active), []byte("Successor: 12345\n")...)
	cases := map[string]struct {
		reason       string
		secret, disk []byte
		want         bool
	}{
		"start":          {"the Secret retires a key named still holds active", retiring, active, true},
		"started":        {"named linked a successor: rndc ran, or named rolled by itself", retiring, rolling, false},
		"installed now":  {"the key was installed from the Secret: named rolls by itself", retiring, retiring, false},
		"not retiring":   {"no rollover in the Secret", active, active, false},
		"comment only":   {"a comment that names the field is no field", []byte("; Retired: soon\n"), active, false},
		"no disk .state": {"a key named has not written a .state for yet", retiring, nil, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := dnssec.NeedsRollover(tc.secret, tc.disk); got != tc.want {
				t.Errorf("%s: NeedsRollover = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
