package bindtools

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeTB records how a helper ended the test instead of ending this one.
type fakeTB struct {
	testing.TB
	ended string // "", "fatal" or "skip"
	msg   string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatal(args ...any) {
	f.end("fatal", fmt.Sprint(args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) { f.end("fatal", fmt.Sprintf(format, args...)) }
func (f *fakeTB) Skipf(format string, args ...any)  { f.end("skip", fmt.Sprintf(format, args...)) }
func (f *fakeTB) end(how, msg string) {
	f.ended, f.msg = how, msg
	runtime.Goexit()
}

// runFake runs fn against a fakeTB on its own goroutine (Goexit ends only it).
func runFake(t *testing.T, fn func(tb testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestRequirements(t *testing.T) {
	cases := map[string]struct {
		reason   string
		env      map[string]string
		tools    []string
		fn       func(tb testing.TB)
		wantEnd  string
		wantText string
	}{
		"BINDMissingFails": {
			reason:   "a missing BIND tool must fail the test with an install hint, not skip it",
			env:      map[string]string{EnvSkipBIND: ""},
			tools:    []string{"named", "bind-fn-no-such-tool"},
			fn:       RequireBIND,
			wantEnd:  "fatal",
			wantText: "apt-get install",
		},
		"BINDMissingSkipsWhenAsked": {
			reason:   "BINDFN_SKIP_BIND=1 turns the failure into a skip",
			env:      map[string]string{EnvSkipBIND: "1"},
			tools:    []string{"bind-fn-no-such-tool"},
			fn:       RequireBIND,
			wantEnd:  "skip",
			wantText: "bind-fn-no-such-tool",
		},
		"BinMissingFails": {
			reason:   "a missing bin/ CLI fails with the make target that builds it",
			env:      map[string]string{EnvSkipCLI: ""},
			fn:       func(tb testing.TB) { Bin(tb, "bind-fn-no-such-cli") },
			wantEnd:  "fatal",
			wantText: "make tools build",
		},
		"BinMissingSkipsWhenAsked": {
			reason:  "BINDFN_SKIP_CLI=1 turns the failure into a skip",
			env:     map[string]string{EnvSkipCLI: "1"},
			fn:      func(tb testing.TB) { Bin(tb, "bind-fn-no-such-cli") },
			wantEnd: "skip",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if tc.tools != nil {
				saved := BINDTools
				BINDTools = tc.tools
				t.Cleanup(func() { BINDTools = saved })
			}
			f := runFake(t, tc.fn)
			if f.ended != tc.wantEnd || !strings.Contains(f.msg, tc.wantText) {
				t.Errorf("%s\nended %q with %q, want %q with a message containing %q",
					tc.reason, f.ended, f.msg, tc.wantEnd, tc.wantText)
			}
		})
	}
}

func TestRepoRoot(t *testing.T) {
	root := RepoRoot(t)
	if m, err := moduleOf(filepath.Join(root, "go.mod")); err != nil || m != Module {
		t.Errorf("RepoRoot() = %s whose go.mod declares %q (%v), want module %s", root, m, err, Module)
	}
	if _, err := findRoot(t.TempDir()); err == nil {
		t.Errorf("findRoot(tempdir) found a root, want an error")
	}
}

func TestFreePort(t *testing.T) {
	p := FreePort(t)
	// Both protocols must be bindable on it.
	l, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		t.Fatalf("FreePort() = %d, but TCP listen failed: %v", p, err)
	}
	defer l.Close()
	u, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		t.Fatalf("FreePort() = %d, but UDP listen failed: %v", p, err)
	}
	u.Close()
}

func TestNamedCheckconfAndZone(t *testing.T) {
	RequireBIND(t)
	root := t.TempDir()
	mustWrite := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zone := `$TTL 60
@ IN SOA ns1.example.test. hostmaster.example.test. 1 300 60 1209600 60
@ IN NS ns1.example.test.
ns1 IN A 192.0.2.1
`
	mustWrite("etc/bind-fn/zones/0/example.test.zone", zone)
	mustWrite("etc/bind-fn/config/named.conf", `options { directory "/var/lib/bind"; };
zone "example.test" { type primary; file "/etc/bind-fn/zones/0/example.test.zone"; };
`)
	mustWrite("etc/bind-fn/config/bad.conf", `options { directory "/var/lib/bind"; };
zone "example.test" { type primary; file "/etc/bind-fn/zones/0/missing.zone"; };
`)
	if err := os.MkdirAll(filepath.Join(root, "var/lib/bind"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite("bad.zone", "$TTL 60\n@ IN NS ns1.example.test.\n")

	cases := map[string]struct {
		reason  string
		run     func(t testing.TB) (string, error) // t is the subtest's: a checker missing skips it alone
		wantErr bool
		want    string
	}{
		"ConfOK": {
			reason: "a valid config with its zone at the pod path loads inside -t root",
			run:    func(t testing.TB) (string, error) { return NamedCheckconf(t, root, "/etc/bind-fn/config/named.conf") },
			want:   "example.test/IN: loaded serial 1",
		},
		"ConfMissingZone": {
			reason:  "a zone file missing under root is an error",
			run:     func(t testing.TB) (string, error) { return NamedCheckconf(t, root, "/etc/bind-fn/config/bad.conf") },
			wantErr: true,
			want:    "missing.zone",
		},
		"ZoneOK": {
			reason: "a zone with SOA and NS loads",
			run: func(t testing.TB) (string, error) {
				return NamedCheckzone(t, "example.test", filepath.Join(root, "etc/bind-fn/zones/0/example.test.zone"))
			},
			want: "OK",
		},
		"ZoneNoSOA": {
			reason: "a zone without SOA does not load",
			run: func(t testing.TB) (string, error) {
				return NamedCheckzone(t, "example.test", filepath.Join(root, "bad.zone"))
			},
			wantErr: true,
			want:    "has 0 SOA records",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := tc.run(t)
			if (err != nil) != tc.wantErr || !strings.Contains(out, tc.want) {
				t.Errorf("%s\nerr = %v (want error: %v), output:\n%s\nwant output containing %q",
					tc.reason, err, tc.wantErr, out, tc.want)
			}
		})
	}
}

// TestReleases: each release's programs are that release's (named -v and
// named-checkconf -v through Command and Offline), so a test that names
// 9.20 cannot silently run the host's 9.18.
func TestReleases(t *testing.T) {
	for _, r := range Releases {
		t.Run(r.Name, func(t *testing.T) {
			for _, c := range []struct {
				prog string
				cmd  func(string, ...string) *exec.Cmd
			}{
				{"named", func(n string, a ...string) *exec.Cmd { return r.Command(t, n, a...) }},
				{"named-checkconf", func(n string, a ...string) *exec.Cmd { return r.Offline(t, n, a...) }},
				{"named-checkzone", func(n string, a ...string) *exec.Cmd { return r.Offline(t, n, a...) }},
			} {
				out, err := c.cmd(c.prog, "-v").CombinedOutput()
				if err != nil {
					t.Fatalf("%s -v: %v\n%s", c.prog, err, out)
				}
				if v := strings.TrimSpace(string(out)); !strings.Contains(v, " "+r.Name+".") && !strings.HasPrefix(v, r.Name+".") {
					t.Errorf("%s -v of %s printed %q", c.prog, r, v)
				}
			}
		})
	}
	if _, err := ReleaseNamed("9.16"); err == nil || !strings.Contains(err.Error(), "9.18, 9.20") {
		t.Errorf("ReleaseNamed(9.16) = %v, want an error naming the releases", err)
	}
}

// TestScript: a release's script runs that release's program and keeps
// its PID (the agent signals named by PID).
func TestScript(t *testing.T) {
	for _, r := range Releases {
		t.Run(r.Name, func(t *testing.T) {
			out, err := exec.Command(r.Script(t, t.TempDir(), "named"), "-v").CombinedOutput()
			if err != nil || !strings.Contains(string(out), " "+r.Name+".") {
				t.Fatalf("named -v through the script: %v: %s", err, out)
			}
		})
	}
}
