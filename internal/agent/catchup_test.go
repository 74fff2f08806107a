package agent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// TestRefreshUnloadedStub: a stub or mirror zone that never loaded on a
// secondary is refreshed on the cadence alone. The primary holds such a zone
// as a stub or mirror too, so asking it for the zone's SOA (the check a
// secondary zone gets) never succeeds; before, such a zone waited for BIND's
// own retry, 50–100 s after its first refresh failed.
func TestRefreshUnloadedStub(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	rndc := filepath.Join(dir, "rndc")
	// The rndc stand-in records its arguments after "-c <conf>".
	if err := os.WriteFile(rndc, []byte("#!/bin/sh\nshift 2\necho \"$*\" >> "+calls+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := &Agent{
		role: RoleSecondary,
		rndc: RNDC{Bin: rndc, Conf: filepath.Join(dir, "rndc.conf")},
		cfg:  &layout.AgentConfigDoc{Cluster: "c"},
		log:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	zones := []layout.ZoneRef{
		{Zone: "stub.test", Type: layout.ZoneTypeStub},
		{Zone: "mirror.test", View: "int", Type: layout.ZoneTypeMirror},
		{Zone: "sec.test"}, // a secondary zone: no view key, no primary known, so left alone
	}
	tried := map[layout.ZoneRef]time.Time{}
	a.refreshUnloaded(context.Background(), zones, tried)
	if _, err := os.Stat(calls); err == nil {
		t.Fatalf("first pass refreshed a zone seen unloaded for the first time: named's own first refresh gets refreshEvery")
	}
	for z := range tried {
		tried[z] = time.Now().Add(-2 * refreshEvery)
	}
	a.refreshUnloaded(context.Background(), zones, tried)
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatalf("no rndc call for the unloaded stub and mirror zones: %v", err)
	}
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{"refresh stub.test", "refresh mirror.test IN int"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rndc calls (-want +got):\n%s", diff)
	}
}
