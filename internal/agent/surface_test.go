package agent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// everyPath is every path the agent serves or has served on its network
// listener, and paths a client might guess for a state change.
var everyPath = []string{"/metrics", "/status", "/readyz", "/healthz", "/drain", "/drain/", "/DRAIN",
	"/", "/reload", "/reconfig", "/apply", "/debug/pprof/", "/metrics/x"}

var everyMethod = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions}

// do sends one request and returns the status, the Allow header and the body.
func do(t *testing.T, c *http.Client, ctx context.Context, method, url string) (int, string, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, r.Header.Get("Allow"), string(b), nil
}

// TestNetworkSurfaceChangesNothing: on the network listener the probe and
// metrics routes answer GET and HEAD, any other method 405, any other path
// (/drain among them) 404, and no request changes anything: readiness stays
// 200, /status and /metrics read as before.
func TestNetworkSurfaceChangesNothing(t *testing.T) {
	s := NewState(RoleSecondary, 1)
	s.Update(func(st *Status) { st.Ready = true })
	s.Metrics().NamedUp.Set(1)
	s.SetDrain(0) // a drain, were one reachable here, would return at once
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	read := func() (Status, string) {
		var b strings.Builder
		s.WriteMetrics(&b)
		return s.Snapshot(), b.String()
	}
	status0, metrics0 := read()
	routes := map[string]bool{"/metrics": true, "/status": true, "/readyz": true, "/healthz": true}
	for _, path := range everyPath {
		for _, method := range everyMethod {
			code, allow, body, err := do(t, srv.Client(), context.Background(), method, srv.URL+path)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			want, reason := http.StatusNotFound, "not a route of the network listener"
			if routes[path] {
				want, reason = http.StatusMethodNotAllowed, "a read-only route takes GET and HEAD only"
				if method == http.MethodGet || method == http.MethodHead {
					want, reason = http.StatusOK, "a probe or scrape"
				}
			}
			if code != want {
				t.Errorf("%s %s = %d %.60q, want %d: %s", method, path, code, body, want, reason)
			}
			if code == http.StatusMethodNotAllowed && allow != "GET, HEAD" {
				t.Errorf("%s %s: 405 with Allow %q, want \"GET, HEAD\"", method, path, allow)
			}
		}
	}
	status1, metrics1 := read()
	if d := cmp.Diff(status0, status1); d != "" {
		t.Errorf("requests to the network listener changed /status (-before +after):\n%s", d)
	}
	if d := cmp.Diff(metrics0, metrics1); d != "" {
		t.Errorf("requests to the network listener changed the metrics (-before +after):\n%s", d)
	}
	if code, _, body, _ := do(t, srv.Client(), context.Background(), http.MethodGet, srv.URL+"/readyz"); code != 200 {
		t.Errorf("/readyz after every request = %d %q, want 200", code, body)
	}
}

// TestDrain: the control socket's POST /drain (the preStop hook) turns
// readiness off at once and holds until the drain time has passed since its
// first call, so the kubelet's SIGTERM (named's stop) waits for the pod to
// leave rotation. It takes POST only.
func TestDrain(t *testing.T) {
	s := NewState(RoleSecondary, 1)
	s.Update(func(st *Status) { st.Ready = true })
	s.SetDrain(time.Hour)
	net := httptest.NewServer(s.Handler())
	defer net.Close()
	ctl := httptest.NewServer(s.ControlHandler())
	defer ctl.Close()
	readyz := func() (int, string) {
		code, _, body, err := do(t, net.Client(), context.Background(), http.MethodGet, net.URL+"/readyz")
		if err != nil {
			t.Fatal(err)
		}
		return code, body
	}
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete} {
		if code, _, _, err := do(t, ctl.Client(), context.Background(), method, ctl.URL+"/drain"); err != nil || code != http.StatusMethodNotAllowed {
			t.Errorf("%s /drain on the control socket = %d %v, want 405: a state change takes POST only", method, code, err)
		}
	}
	if code, _ := readyz(); code != 200 {
		t.Fatalf("/readyz before the drain = %d, want 200", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() { _, _, _, err := do(t, ctl.Client(), ctx, http.MethodPost, ctl.URL+"/drain"); returned <- err }()
	deadline := time.Now().Add(bindtools.Hang) // a bound against hanging
	for {
		code, body := readyz()
		if code == 503 {
			if !strings.Contains(body, "draining since") {
				t.Errorf("/readyz while draining = %q", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still 200 %s after POST /drain", bindtools.Hang)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-returned:
		t.Fatalf("/drain returned before its hour: %v", err)
	default:
	}
	if st := s.Snapshot(); st.DrainingSince == nil {
		t.Error("/status has no drainingSince while draining")
	}
	cancel() // the kubelet giving up on the hook
	if err := <-returned; err == nil {
		t.Error("a cancelled /drain reported success")
	}
	// The drain is counted from the first call: with no time left a second
	// call returns at once, and the pod stays unready.
	s.SetDrain(0)
	if code, _, body, err := do(t, ctl.Client(), context.Background(), http.MethodPost, ctl.URL+"/drain"); err != nil || code != 200 || body != "drained\n" {
		t.Errorf("POST /drain after its time = %d %q %v, want 200 \"drained\"", code, body, err)
	}
	if code, _ := readyz(); code != 503 {
		t.Errorf("/readyz after the drain = %d, want 503", code)
	}
}

// TestControlSocket runs the agent (a stand-in named) and drains it the way
// the preStop hook does, `bind-fn-agent drain` over the control socket in
// the run directory; the network listener has no /drain.
func TestControlSocket(t *testing.T) {
	l := newLab(t)
	l.writeKey("upd-tsig", l.secret)
	l.writeZones(l.zoneFiles(1, "192.0.2.10"))
	l.writeConfig([]byte("# p\n"), []byte("# s\n"), l.primaryDoc(nil))
	o := l.options(0, &fakeResolver{})
	o.Named, o.NamedCheckconf, o.RNDC = fakeNamed(t, "while :; do sleep 0.05; done"), "true", "true"
	o.Drain = time.Millisecond
	sock := filepath.Join(l.runDir, ControlSocketName)
	// A socket left by the container's previous run, which the run
	// directory (an emptyDir) outlives.
	if err := os.MkdirAll(l.runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	old.SetUnlinkOnClose(false)
	old.Close()
	addr := make(chan string, 1)
	o.Started = func(a string) { addr <- a }
	a, stop := l.run(o)
	base := "http://" + <-addr
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatalf("no control socket: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("control socket mode %v, want 0600: the agent's user only", fi.Mode().Perm())
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		if code, _, _, err := do(t, http.DefaultClient, context.Background(), method, base+"/drain"); err != nil || code != http.StatusNotFound {
			t.Errorf("%s /drain on the network listener = %d %v, want 404", method, code, err)
		}
	}
	if st := a.State().Snapshot(); st.DrainingSince != nil {
		t.Fatalf("draining after requests to the network listener: %v", st.DrainingSince)
	}
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"drain", "--control-socket", sock}, func(string) string { return "" }, &out); code != 0 {
		t.Fatalf("bind-fn-agent drain = %d: %s", code, out.String())
	}
	if !strings.Contains(out.String(), "drained") {
		t.Errorf("bind-fn-agent drain printed %q, want the agent's \"drained\"", out.String())
	}
	code, _, body, err := do(t, http.DefaultClient, context.Background(), http.MethodGet, base+"/readyz")
	if err != nil || code != 503 || !strings.Contains(body, "draining since") {
		t.Errorf("/readyz after the drain = %d %q %v, want 503 draining", code, body, err)
	}
	if err := stop(); err != nil {
		t.Fatalf("agent stop: %v", err)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("control socket after the agent stopped: %v, want it removed", err)
	}
}

// TestControlSocketInTheWay: a file that is not a socket where the control
// socket goes is a start error naming the flag, and is left alone.
func TestControlSocketInTheWay(t *testing.T) {
	l := newLab(t)
	l.writeKey("upd-tsig", l.secret)
	l.writeZones(l.zoneFiles(1, "192.0.2.10"))
	l.writeConfig([]byte("# p\n"), []byte("# s\n"), l.primaryDoc(nil))
	o := l.options(0, &fakeResolver{})
	o.Named, o.NamedCheckconf, o.RNDC = fakeNamed(t, "while :; do sleep 0.05; done"), "true", "true"
	o.ControlSocket = filepath.Join(t.TempDir(), "not-a-socket")
	if err := os.WriteFile(o.ControlSocket, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	err = a.Run(context.Background())
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--control-socket") || !strings.Contains(err.Error(), "in the way") {
		t.Errorf("Run = %v, want a usage error naming --control-socket", err)
	}
	if b, _ := os.ReadFile(o.ControlSocket); string(b) != "keep" {
		t.Errorf("the file in the way was changed: %q", b)
	}
}
