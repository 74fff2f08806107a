package agent

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
)

// fakeAPI serves one namespace's configmaps collection the way the API
// server does for a list or watch by fieldSelector metadata.name.
type fakeAPI struct {
	mu     sync.Mutex
	rv     int
	cms    map[string]map[string]string
	events chan string // JSON watch events, to every watcher
	lists  int
	down   bool
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer tok" {
		http.Error(w, "no token", http.StatusUnauthorized)
		return
	}
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down || r.URL.Path != "/api/v1/namespaces/dns/configmaps" {
		http.Error(w, "no", http.StatusServiceUnavailable)
		return
	}
	name := strings.TrimPrefix(r.URL.Query().Get("fieldSelector"), "metadata.name=")
	if r.URL.Query().Get("watch") == "" {
		f.mu.Lock()
		f.lists++
		items := []any{}
		if d, ok := f.cms[name]; ok {
			items = append(items, f.object(name, d))
		}
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": fmt.Sprint(f.rv)}, "items": items})
		f.mu.Unlock()
		_, _ = w.Write(b)
		return
	}
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev := <-f.events:
			_, _ = io.WriteString(w, ev+"\n")
			w.(http.Flusher).Flush()
		}
	}
}

func (f *fakeAPI) object(name string, data map[string]string) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": name, "resourceVersion": fmt.Sprint(f.rv)}, "data": data}
}

// set changes a ConfigMap and sends its watch event.
func (f *fakeAPI) set(name string, data map[string]string) {
	f.mu.Lock()
	f.rv++
	f.cms[name] = data
	b, _ := json.Marshal(map[string]any{"type": "MODIFIED", "object": f.object(name, data)})
	f.mu.Unlock()
	f.events <- string(b)
}

// remove deletes a ConfigMap and sends its watch event.
func (f *fakeAPI) remove(name string) {
	f.mu.Lock()
	f.rv++
	obj := f.object(name, f.cms[name])
	delete(f.cms, name)
	b, _ := json.Marshal(map[string]any{"type": "DELETED", "object": obj})
	f.mu.Unlock()
	f.events <- string(b)
}

func readLive(t *testing.T, dir string) map[string]string {
	t.Helper()
	names, err := visibleNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue // a link to a name the mount no longer has
		}
		out[n] = string(b)
	}
	return out
}

// eventually polls until dir shows want (bounded by the BIND hang bound).
func eventually(t *testing.T, dir string, want map[string]string, why string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := readLive(t, dir)
		if cmp.Diff(want, got) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s (-want +got):\n%s", why, dir, cmp.Diff(want, got))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// equalLive checks dir shows want now: the caller has waited for the event
// that matters (a pass over the mounts, a watch event handled), so nothing
// is left to arrive.
func equalLive(t *testing.T, dir string, want map[string]string, why string) {
	t.Helper()
	if diff := cmp.Diff(want, readLive(t, dir)); diff != "" {
		t.Fatalf("%s: %s (-want +got):\n%s", why, dir, diff)
	}
}

// mountPass returns when the watcher has looked at every mount once more:
// the watcher takes the second tick only after its pass for the first.
func mountPass(ticks chan<- time.Time) {
	ticks <- time.Time{}
	ticks <- time.Time{}
}

// waitEvents waits until the watcher has handled n watch events of its one
// ConfigMap (bounded by the BIND hang bound).
func waitEvents(t *testing.T, w *watcher, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		w.mu.Lock()
		got := w.mirrors[0].events
		w.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watcher handled %d watch events, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWatchConfigMaps: LIVE follows the mount until the API server answers,
// then the API server's object (a watch event reaches LIVE without the
// mount changing; a deletion leaves the last content), ignores the mount while the API server is reachable, and
// returns to the mount when the API server has been unreachable for longer
// than the fallback delay.
func TestWatchConfigMaps(t *testing.T) {
	dir := t.TempDir()
	mount, live := filepath.Join(dir, "mounted", "config"), filepath.Join(dir, "config")
	if err := kubeletdir.Write(mount, map[string][]byte{"agent.json": []byte("mounted-1")}); err != nil {
		t.Fatal(err)
	}
	api := &fakeAPI{cms: map[string]map[string]string{"c-config": {"agent.json": "api-1", "named.conf.primary": "p"}}, events: make(chan string, 8), rv: 10}
	srv := httptest.NewTLSServer(api)
	defer srv.Close()
	ca := filepath.Join(dir, "ca.crt")
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tok, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opt := Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Namespace: "dns", WatchFallback: 300 * time.Millisecond,
		Mirrors: []Mirror{{Name: "c-config", Live: live, Mount: mount}}}
	w, err := newWatcher(opt)
	if err != nil {
		t.Fatal(err)
	}
	// Before the API server is asked: the mount, and a name the mount gains.
	eventually(t, live, map[string]string{"agent.json": "mounted-1"}, "laid onto the mount")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ticks := make(chan time.Time)
	go w.runTicks(ctx, ticks)
	if err := kubeletdir.Write(mount, map[string][]byte{"agent.json": []byte("mounted-2"), "extra": []byte("x")}); err != nil {
		t.Fatal(err)
	}
	mountPass(ticks)
	equalLive(t, live, map[string]string{"agent.json": "mounted-2", "extra": "x"}, "a name the mount gained")
	cancel()

	// Now with the API server.
	opt.API = APIServer{URL: srv.URL, TokenFile: tok, CAFile: ca}
	if w, err = newWatcher(opt); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go w.runTicks(ctx, ticks)
	eventually(t, live, map[string]string{"agent.json": "api-1", "named.conf.primary": "p"}, "the listed object")
	api.set("c-config", map[string]string{"agent.json": "api-2"})
	eventually(t, live, map[string]string{"agent.json": "api-2"}, "a watch event")
	api.remove("c-config")
	waitEvents(t, w, 2) // the MODIFIED and the DELETED
	equalLive(t, live, map[string]string{"agent.json": "api-2"}, "a deleted ConfigMap leaves its last content")
	api.set("c-config", map[string]string{"agent.json": "api-2"})
	waitEvents(t, w, 3)
	if err := kubeletdir.Write(mount, map[string][]byte{"agent.json": []byte("mounted-3")}); err != nil {
		t.Fatal(err)
	}
	mountPass(ticks)
	equalLive(t, live, map[string]string{"agent.json": "api-2"}, "the mount, older than the API server, ignored")

	// The API server goes away: after the fallback delay, the mount again.
	api.mu.Lock()
	api.down = true
	api.mu.Unlock()
	srv.CloseClientConnections()
	eventually(t, live, map[string]string{"agent.json": "mounted-3"}, "the mount after the fallback delay")
	// And back: the API server's object.
	api.mu.Lock()
	api.down = false
	api.mu.Unlock()
	eventually(t, live, map[string]string{"agent.json": "api-2"}, "the API server, reachable again")
}

func TestParseMirror(t *testing.T) {
	for name, tc := range map[string]struct {
		reason string
		in     string
		want   Mirror
		err    bool
	}{
		"ok":       {reason: "NAME=LIVE:MOUNT", in: "c-config=/etc/bind-fn/config:/etc/bind-fn/mounted/config", want: Mirror{Name: "c-config", Live: "/etc/bind-fn/config", Mount: "/etc/bind-fn/mounted/config"}},
		"relative": {reason: "directories must be absolute", in: "c=etc:/m", err: true},
		"no mount": {reason: "both directories are needed", in: "c=/etc", err: true},
		"no name":  {reason: "the ConfigMap's name is needed", in: "=/a:/b", err: true},
	} {
		got, err := ParseMirror(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%s: %s: err %v, want error %v", name, tc.reason, err, tc.err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" && !tc.err {
			t.Errorf("%s: %s (-want +got):\n%s", name, tc.reason, diff)
		}
	}
}
