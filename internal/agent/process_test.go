package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// fakeNamed writes a shell script standing in for named.
func fakeNamed(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "named")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNamedSupervision(t *testing.T) {
	// A process started with SIGHUP ignored (under nohup, or a runner that
	// ignores it) hands that on to the programs it starts, and a shell cannot
	// trap a signal that was ignored when it started: the fake named below
	// would never see the SIGHUP. The real agent subscribes to the signals it
	// forwards (signal.Notify), which gives named the default disposition;
	// with Options.Signals set it does not, so the test subscribes instead.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	t.Cleanup(func() { signal.Stop(hup) })
	cases := map[string]struct {
		reason   string
		named    string
		signal   os.Signal
		wantCode int // -1: Run returns nil
	}{
		"NamedDies": {reason: "named exiting on its own ends the agent with named's status",
			named: "exit 3", wantCode: 3},
		"NamedDiesCleanly": {reason: "named exiting 0 unasked is still a failure",
			named: "exit 0", wantCode: 1},
		"SIGTERMForwarded": {reason: "SIGTERM reaches named, whose clean exit is the agent's",
			named: `trap 'exit 0' TERM; : >%q; while :; do sleep 0.05; done`, signal: syscall.SIGTERM, wantCode: -1},
		"SIGTERMStatus": {reason: "named's status after a forwarded signal is kept",
			named: `trap 'exit 7' TERM; : >%q; while :; do sleep 0.05; done`, signal: syscall.SIGTERM, wantCode: 7},
		"SIGHUPForwarded": {reason: "SIGHUP is forwarded and named keeps running",
			named: `trap 'exit 9' HUP; : >%q; while :; do sleep 0.05; done`, signal: syscall.SIGHUP, wantCode: 9},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := newLab(t)
			l.writeKey("upd-tsig", l.secret)
			l.writeZones(l.zoneFiles(1, "192.0.2.10"))
			l.writeConfig([]byte("# p\n"), []byte("# s\n"), l.primaryDoc(nil))
			o := l.options(0, &fakeResolver{})
			// A script that traps a signal creates this file once its trap is
			// set (the %q in its body), so the signal is sent after that.
			trapped := filepath.Join(t.TempDir(), "trapped")
			body := tc.named
			if tc.signal != nil {
				body = fmt.Sprintf(body, trapped)
			}
			o.Named, o.NamedCheckconf, o.RNDC = fakeNamed(t, body), "true", "true"
			o.Listen = "off"
			sigs := make(chan os.Signal, 1)
			o.Signals = sigs
			started := make(chan struct{})
			o.Started = func(string) { close(started) }
			a, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- a.Run(context.Background()) }()
			<-started
			if tc.signal != nil {
				waitFile(t, trapped, bindtools.Hang)
				sigs <- tc.signal
			}
			var err2 error
			select {
			case err2 = <-done:
			case <-time.After(bindtools.Hang):
				t.Fatalf("%s: agent did not return", tc.reason)
			}
			var ne *NamedExitError
			switch {
			case tc.wantCode == -1 && err2 != nil:
				t.Errorf("%s: Run = %v, want nil", tc.reason, err2)
			case tc.wantCode >= 0 && (!errors.As(err2, &ne) || ne.Code != tc.wantCode):
				t.Errorf("%s: Run = %v, want named exit %d", tc.reason, err2, tc.wantCode)
			}
			if value(a.State().Metrics().NamedUp) != 0 {
				t.Errorf("%s: named_up still 1", tc.reason)
			}
		})
	}
}

// waitFile waits until path exists, failing the test after timeout.
func waitFile(t *testing.T, path string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %s", path, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
