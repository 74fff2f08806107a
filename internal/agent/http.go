package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The agent serves two HTTP surfaces.
//
// Handler is the network listener (--listen, the pod's metrics port): what
// the kubelet's probes and Prometheus read, and nothing else. Every route
// is GET (and HEAD); another method answers 405, another path 404, and no
// request to it changes the agent's or named's state. Anyone who reaches the
// pod's port can read it.
//
// ControlHandler is the control socket (--control-socket, a unix socket in
// the run directory, an emptyDir only the named container mounts): what
// changes the pod's state. It is reachable only from inside the container,
// by `bind-fn-agent drain`, the preStop hook. A kubelet httpGet hook could
// not reach it: those go to the pod IP, from the node.

// Handler serves the network listener: GET /metrics, /status, /readyz and
// /healthz. It changes nothing.
func (s *State) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	mux.HandleFunc("GET /status", s.serveStatus)
	mux.HandleFunc("GET /readyz", s.serveReadyz)
	mux.HandleFunc("GET /healthz", s.serveHealthz)
	return mux
}

// ControlHandler serves the control socket: POST /drain, the pod's preStop
// hook. It must never be served on a network listener.
func (s *State) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /drain", s.serveDrain)
	return mux
}

func (s *State) serveMetrics(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	s.WriteMetrics(&b)
	s.mu.Lock()
	extra := s.extra
	s.mu.Unlock()
	if extra != nil {
		extra(r.Context(), &b)
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

func (s *State) serveStatus(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(s.Snapshot())
}

func (s *State) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	st := s.Snapshot()
	if st.DrainingSince != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "draining since %s: the pod is being deleted; named answers until the drain ends\n", st.DrainingSince.UTC().Format(time.RFC3339))
		return
	}
	if st.HiddenPrimary {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "hidden primary: not serving queries through the serve Service")
		return
	}
	if !st.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: zones not loaded: %s\n", strings.Join(st.Unready, " "))
		return
	}
	fmt.Fprintln(w, "ok")
}

func (s *State) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	if gaugeValue(s.metrics.NamedUp) != 1 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "named is not running")
		return
	}
	fmt.Fprintln(w, "ok")
}

// serveDrain is the pod's preStop hook: /readyz answers 503 from the first
// call on, and the call returns when the drain time has passed since then
// (or the kubelet gives up on the hook), so SIGTERM, which stops named,
// comes only after the pod left every Service's rotation and kube-proxy
// dropped its UDP flows to it (objects.DrainSeconds says why both).
func (s *State) serveDrain(w http.ResponseWriter, r *http.Request) {
	end := s.beginDrain()
	t := time.NewTimer(time.Until(end))
	defer t.Stop()
	select {
	case <-t.C:
		fmt.Fprintln(w, "drained")
	case <-r.Context().Done():
	}
}
