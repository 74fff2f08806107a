package agent

// The agent's own ConfigMaps, read from the API server. A kubelet updates a
// mounted ConfigMap only when it next syncs the pod (syncFrequency, one
// minute by default, plus jitter), so a change applied with kubectl would
// reach named a minute or more later. With --configmap the agent lists and
// watches exactly its ConfigMaps (get/list/watch, by name, nothing else: the
// rendered Role) and lays each into the directory named and the agent read
// (LIVE); the kubelet's mount (MOUNT) is the fallback, used before the first
// list succeeds and whenever the API server has been unreachable for longer
// than the fallback delay. docs/kubelet-sync.md has the trade-off.
//
// LIVE is laid out as the kubelet lays a volume: every visible name links
// through `..data`, which links either to the mount (fallback) or to a
// snapshot `..<ts>` of the API server's object; a switch is one rename, so
// named and the change detector (TreeHash) see the old or the new content,
// never a mix.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// Mirror is one ConfigMap the agent reads from the API server.
type Mirror struct {
	// Name is the ConfigMap's name (in Options.Namespace).
	Name string
	// Live is the directory named and the agent read.
	Live string
	// Mount is the kubelet's mount of the same ConfigMap, the fallback.
	Mount string
}

// ParseMirror reads a --configmap value: NAME=LIVE:MOUNT.
func ParseMirror(v string) (Mirror, error) {
	name, dirs, ok := strings.Cut(v, "=")
	live, mount, ok2 := strings.Cut(dirs, ":")
	if !ok || !ok2 || name == "" || !filepath.IsAbs(live) || !filepath.IsAbs(mount) {
		return Mirror{}, fmt.Errorf("--configmap %q: want NAME=LIVE:MOUNT with absolute directories", v)
	}
	return Mirror{Name: name, Live: filepath.Clean(live), Mount: filepath.Clean(mount)}, nil
}

// APIServer is how the agent reaches the API server: the pod's in-cluster
// settings ($KUBERNETES_SERVICE_HOST, $KUBERNETES_SERVICE_PORT and the
// projected service account token and CA).
type APIServer struct {
	// URL is https://host:port; "" disables the API server (mounts only).
	URL string
	// TokenFile is re-read on every request (the kubelet rotates it).
	TokenFile, CAFile string
}

// In-cluster defaults.
const (
	// DefaultWatchFallback is how long the API server may be unreachable
	// before the agent follows the kubelet's mounts again.
	DefaultWatchFallback = 2 * time.Minute
)

// InClusterAPI is the API server from the pod's environment; URL is empty
// outside a cluster.
func InClusterAPI(getenv func(string) string) APIServer {
	a := APIServer{TokenFile: filepath.Join(layout.ServiceAccountDir, "token"), CAFile: filepath.Join(layout.ServiceAccountDir, "ca.crt")}
	if h, p := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT"); h != "" && p != "" {
		a.URL = "https://" + net.JoinHostPort(h, p)
	}
	return a
}

// configMap is the part of a ConfigMap the agent reads.
type configMap struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Data       map[string]string `json:"data"`
	BinaryData map[string][]byte `json:"binaryData"`
}

func (c *configMap) files() map[string][]byte {
	out := map[string][]byte{}
	for k, v := range c.Data {
		out[k] = []byte(v)
	}
	for k, v := range c.BinaryData {
		out[k] = v
	}
	return out
}

type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// keyName is what the API server admits as a ConfigMap key.
var keyName = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// mirrorState is one mirror's source, guarded by watcher.mu.
type mirrorState struct {
	Mirror
	fromAPI      bool   // LIVE shows an API snapshot (else the mount)
	version      string // the snapshot's resourceVersion
	mountNames   string // the mount's names last linked (fallback)
	failingSince time.Time
	events       int // watch events of this ConfigMap handled (tests wait on it)
}

// watcher keeps every mirror's LIVE directory.
type watcher struct {
	api      APIServer
	ns       string
	fallback time.Duration
	log      *slog.Logger
	client   *http.Client
	mu       sync.Mutex
	mirrors  []*mirrorState
	// changed is kicked after LIVE switched, so the agent looks at once.
	changed chan struct{}
}

// newWatcher lays every LIVE directory onto its mount, so named and the
// agent can start from the kubelet's files before the API server answers.
func newWatcher(opt Options) (*watcher, error) {
	w := &watcher{api: opt.API, ns: opt.Namespace, fallback: opt.WatchFallback, log: opt.Log, changed: make(chan struct{}, 1)}
	if w.fallback <= 0 {
		w.fallback = DefaultWatchFallback
	}
	seen := map[string]bool{}
	for _, m := range opt.Mirrors {
		if seen[m.Live] {
			return nil, fmt.Errorf("--configmap: %s is named twice", m.Live)
		}
		seen[m.Live] = true
		s := &mirrorState{Mirror: m}
		if err := s.layMount(); err != nil {
			return nil, err
		}
		w.mirrors = append(w.mirrors, s)
	}
	if w.api.URL != "" {
		if w.ns == "" {
			return nil, errors.New("--configmap with an API server needs --namespace (or $POD_NAMESPACE)")
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		pool := x509.NewCertPool()
		if b, err := os.ReadFile(w.api.CAFile); err == nil {
			pool.AppendCertsFromPEM(b)
			tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		} else {
			opt.Log.Warn("no API server CA; following the kubelet's mounts only", "file", w.api.CAFile, "err", err)
			w.api.URL = ""
		}
		w.client = &http.Client{Transport: tr}
	}
	return w, nil
}

// layMount points LIVE at the mount: `..data` to the mount directory, a
// link per name the mount holds.
func (s *mirrorState) layMount() error {
	names, err := visibleNames(s.Mount)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Live, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", s.Live, err)
	}
	old, _ := os.Readlink(filepath.Join(s.Live, "..data"))
	for _, n := range names {
		if err := LinkAtomic(filepath.Join("..data", n), filepath.Join(s.Live, n)); err != nil {
			return err
		}
	}
	if err := LinkAtomic(s.Mount, filepath.Join(s.Live, "..data")); err != nil {
		return err
	}
	if err := removeStale(s.Live, names); err != nil {
		return err
	}
	if old != "" && !filepath.IsAbs(old) {
		_ = os.RemoveAll(filepath.Join(s.Live, old))
	}
	s.fromAPI, s.version, s.mountNames = false, "", strings.Join(names, "/")
	return nil
}

// visibleNames are dir's names a reader sees (the kubelet's `..` entries
// left out); a missing directory (an optional ConfigMap) holds none.
func visibleNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "..") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// removeStale removes LIVE's visible names not in keep.
func removeStale(dir string, keep []string) error {
	k := map[string]bool{}
	for _, n := range keep {
		k[n] = true
	}
	have, err := visibleNames(dir)
	if err != nil {
		return err
	}
	for _, n := range have {
		if !k[n] {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return fmt.Errorf("cannot remove %s: %w", filepath.Join(dir, n), err)
			}
		}
	}
	return nil
}

// run keeps every mirror until ctx ends: a list-and-watch per ConfigMap,
// and, for the mirrors on their mount, new names linked as they appear
// (looked for every tick).
func (w *watcher) run(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	w.runTicks(ctx, t.C)
}

// runTicks is run with the ticks given: a test sends them itself, and knows
// a pass over the mounts is complete when its next tick is taken.
func (w *watcher) runTicks(ctx context.Context, ticks <-chan time.Time) {
	if w.api.URL != "" {
		for _, s := range w.mirrors {
			go w.follow(ctx, s)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		w.mu.Lock()
		for _, s := range w.mirrors {
			if s.fromAPI {
				continue
			}
			names, err := visibleNames(s.Mount)
			if err != nil || strings.Join(names, "/") == s.mountNames {
				continue
			}
			if err := s.layMount(); err != nil {
				w.log.Warn("cannot follow the mounted ConfigMap", "configmap", s.Name, "err", err)
			}
		}
		w.mu.Unlock()
	}
}

// follow lists and watches one ConfigMap until ctx ends. A watch that ends
// after a good list (the API server closes it every few minutes) is
// followed by a new list at once; failures back off up to 30 s.
func (w *watcher) follow(ctx context.Context, s *mirrorState) {
	const first = 500 * time.Millisecond
	backoff := first
	for ctx.Err() == nil {
		start := time.Now()
		listed, err := w.listAndWatch(ctx, s)
		if ctx.Err() != nil {
			return
		}
		if listed && time.Since(start) > time.Second {
			backoff = first
			w.log.Debug("ConfigMap watch ended", "configmap", s.Name, "err", err)
			continue
		}
		w.wait(ctx, s, listed, err, backoff)
		backoff = min(2*backoff, 30*time.Second)
	}
}

// wait records a failed list (the fallback to the mount once the API server
// has been unreachable for long enough) and waits out the backoff; a list
// that worked but whose watch ended at once (a watch the server refuses)
// only waits.
func (w *watcher) wait(ctx context.Context, s *mirrorState, listed bool, err error, backoff time.Duration) {
	if !listed {
		w.mu.Lock()
		if s.failingSince.IsZero() {
			s.failingSince = time.Now()
		}
		down := time.Since(s.failingSince)
		if s.fromAPI && down > w.fallback {
			if lerr := s.layMount(); lerr == nil {
				w.log.Warn("API server unreachable; following the kubelet's mount again", "configmap", s.Name, "for", down.Round(time.Second), "err", err)
				w.kick()
			}
		}
		w.mu.Unlock()
	}
	w.log.Debug("ConfigMap list or watch failed", "configmap", s.Name, "listed", listed, "err", err)
	select {
	case <-ctx.Done():
	case <-time.After(backoff):
	}
}

var errGone = errors.New("resource version gone")

// listAndWatch lists the ConfigMap by name, lays it, then watches it from
// the list's version until the stream ends. It returns whether the list
// succeeded, and why it ended.
func (w *watcher) listAndWatch(ctx context.Context, s *mirrorState) (bool, error) {
	q := url.Values{"fieldSelector": {"metadata.name=" + s.Name}}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []configMap `json:"items"`
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	body, err := w.get(lctx, q)
	if err != nil {
		cancel()
		return false, err
	}
	err = json.NewDecoder(body).Decode(&list)
	body.Close()
	cancel()
	if err != nil {
		return false, fmt.Errorf("cannot read the ConfigMap list: %w", err)
	}
	var cm *configMap
	for i := range list.Items {
		if list.Items[i].Metadata.Name == s.Name {
			cm = &list.Items[i]
		}
	}
	w.mu.Lock()
	s.failingSince = time.Time{}
	w.lay(s, cm, list.Metadata.ResourceVersion)
	w.mu.Unlock()

	q.Set("watch", "1")
	q.Set("allowWatchBookmarks", "true")
	q.Set("timeoutSeconds", "300")
	q.Set("resourceVersion", list.Metadata.ResourceVersion)
	body, err = w.get(ctx, q)
	if err != nil {
		return true, err
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var ev watchEvent
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return true, errors.New("watch ended")
			}
			return true, fmt.Errorf("cannot read the ConfigMap watch: %w", err)
		}
		switch ev.Type {
		case "ADDED", "MODIFIED", "DELETED":
			var c configMap
			if err := json.Unmarshal(ev.Object, &c); err != nil {
				return true, fmt.Errorf("cannot read a ConfigMap watch event: %w", err)
			}
			if c.Metadata.Name != s.Name {
				continue
			}
			w.mu.Lock()
			if ev.Type == "DELETED" {
				w.lay(s, nil, c.Metadata.ResourceVersion)
			} else {
				w.lay(s, &c, c.Metadata.ResourceVersion)
			}
			s.events++
			w.mu.Unlock()
		case "BOOKMARK":
		case "ERROR":
			var st struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(ev.Object, &st)
			if st.Code == http.StatusGone {
				return true, errGone
			}
			return true, fmt.Errorf("watch error %d: %s", st.Code, st.Message)
		}
	}
}

// get is one GET on the namespace's configmaps collection.
func (w *watcher) get(ctx context.Context, q url.Values) (io.ReadCloser, error) {
	u := w.api.URL + "/api/v1/namespaces/" + url.PathEscape(w.ns) + "/configmaps?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	tok, err := os.ReadFile(w.api.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read the service account token: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	req.Header.Set("Accept", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode == http.StatusGone {
			return nil, errGone
		}
		return nil, fmt.Errorf("GET %s: %s: %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	return resp.Body, nil
}

// lay makes LIVE show cm. nil is a ConfigMap that does not exist: before
// the API server's content was laid, an empty directory, as the kubelet
// mounts a missing optional ConfigMap; after, the content stays (a
// ConfigMap deleted from under a running pod leaves named its last files,
// as the kubelet's volume does). w.mu is held.
func (w *watcher) lay(s *mirrorState, cm *configMap, version string) {
	if cm == nil && s.fromAPI {
		w.log.Warn("ConfigMap gone from the API server; its last content stays", "configmap", s.Name)
		return
	}
	files := map[string][]byte{}
	if cm != nil {
		for k, v := range cm.files() {
			if !keyName.MatchString(k) || strings.HasPrefix(k, "..") || k == "." {
				w.log.Warn("ConfigMap key is not a file name; left out", "configmap", s.Name, "key", k)
				continue
			}
			files[k] = v
		}
	}
	if s.fromAPI && sameFiles(s.Live, files) {
		s.version = version
		return
	}
	if err := kubeletdir.Write(s.Live, files); err != nil {
		w.log.Warn("cannot lay the ConfigMap from the API server", "configmap", s.Name, "err", err)
		return
	}
	if !s.fromAPI {
		w.log.Info("following the ConfigMap through the API server", "configmap", s.Name, "resourceVersion", version, "dir", s.Live)
	} else {
		w.log.Info("ConfigMap changed on the API server", "configmap", s.Name, "resourceVersion", version)
	}
	s.fromAPI, s.version = true, version
	w.kick()
}

// sameFiles reports whether dir's visible files hold exactly files.
func sameFiles(dir string, files map[string][]byte) bool {
	names, err := visibleNames(dir)
	if err != nil || len(names) != len(files) {
		return false
	}
	want := slices.Sorted(maps.Keys(files))
	sort.Strings(names)
	for i, n := range names {
		if n != want[i] {
			return false
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || string(b) != string(files[n]) {
			return false
		}
	}
	return true
}

func (w *watcher) kick() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}
