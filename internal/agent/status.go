package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Status is what /status reports.
type Status struct {
	Role    Role `json:"role"`
	Ordinal int  `json:"ordinal"`
	// AppliedConfigHash is the hash of the mounted config, keys and zones
	// that named last accepted.
	AppliedConfigHash string       `json:"appliedConfigHash"`
	LastApply         *time.Time   `json:"lastApply,omitempty"`
	Peers             []PeerStatus `json:"peers"`
	LastError         *ErrorStatus `json:"lastError,omitempty"`
	Ready             bool         `json:"ready"`
	Unready           []string     `json:"unready,omitempty"`
	NamedPID          int          `json:"namedPID,omitempty"`
	// HiddenPrimary makes /readyz answer 503 on the primary even when its
	// zones are loaded, so the serve Service selects only secondaries.
	HiddenPrimary   bool         `json:"hiddenPrimary,omitempty"`
	LastConvergence *Convergence `json:"lastConvergence,omitempty"`
}

// PeerStatus is one resolved server list.
type PeerStatus struct {
	List string   `json:"list"`
	IPs  []string `json:"ips"`
}

// ErrorStatus is the last failure, located when checkconf gave file:line.
type ErrorStatus struct {
	Message string    `json:"message"`
	File    string    `json:"file,omitempty"`
	Line    int       `json:"line,omitempty"`
	Time    time.Time `json:"time"`
}

// Convergence is the last dynamic-zone pass.
type Convergence struct {
	Updated   int       `json:"updated"`
	Removed   int       `json:"removed"`
	Unchanged int       `json:"unchanged"`
	Seconds   float64   `json:"seconds"`
	Error     string    `json:"error,omitempty"`
	Time      time.Time `json:"time"`
}

// metrics are hand-written in the Prometheus text format (no dependency).
type metrics struct {
	counters map[string]float64 // full series name with labels -> value
	gauges   map[string]float64
}

var metricHelp = map[string][2]string{
	"bindfn_agent_reloads_total":                   {"counter", "Config or zone changes applied to named (kind=reconfig|reload)."},
	"bindfn_agent_reload_failures_total":           {"counter", "Changes not applied (stage=checkconf|rndc|prepare)."},
	"bindfn_agent_peer_changes_total":              {"counter", "Times the resolved server lists changed."},
	"bindfn_agent_update_convergence_total":        {"counter", "Dynamic zone convergence passes (result=ok|error)."},
	"bindfn_agent_update_rrsets_total":             {"counter", "RRsets written by UPDATE (op=replace|delete)."},
	"bindfn_agent_update_convergence_last_seconds": {"gauge", "Duration of the last convergence pass."},
	"bindfn_agent_named_up":                        {"gauge", "1 while named runs."},
	"bindfn_agent_ready":                           {"gauge", "1 when every zone of the pod's role is loaded."},
	"bindfn_agent_config_error":                    {"gauge", "1 while the mounted config is rejected and not applied."},
	"bindfn_agent_last_apply_timestamp_seconds":    {"gauge", "Unix time of the last applied change."},
}

// State is the agent's shared, locked view for the HTTP endpoints.
type State struct {
	mu sync.Mutex
	st Status
	m  metrics
	// extra appends more metrics after the agent's own (BIND's statistics);
	// set before serving.
	extra func(ctx context.Context, w *strings.Builder)
}

// SetExtraMetrics makes /metrics append f's output after the agent's own
// metrics; call it before Handler serves.
func (s *State) SetExtraMetrics(f func(ctx context.Context, w *strings.Builder)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extra = f
}

// NewState returns an empty state for role.
func NewState(role Role, ordinal int) *State {
	s := &State{st: Status{Role: role, Ordinal: ordinal, Peers: []PeerStatus{}}}
	s.m.counters = map[string]float64{}
	s.m.gauges = map[string]float64{}
	for _, g := range []string{"bindfn_agent_named_up", "bindfn_agent_ready", "bindfn_agent_config_error"} {
		s.m.gauges[g] = 0
	}
	for _, c := range []string{`bindfn_agent_reloads_total{kind="reconfig"}`, `bindfn_agent_reloads_total{kind="reload"}`,
		`bindfn_agent_reload_failures_total{stage="checkconf"}`, `bindfn_agent_reload_failures_total{stage="rndc"}`,
		`bindfn_agent_reload_failures_total{stage="prepare"}`, `bindfn_agent_peer_changes_total`,
		`bindfn_agent_update_convergence_total{result="ok"}`, `bindfn_agent_update_convergence_total{result="error"}`} {
		s.m.counters[c] = 0
	}
	return s
}

// Update changes the status under the lock.
func (s *State) Update(f func(*Status)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.st)
}

// Snapshot returns a copy of the status.
func (s *State) Snapshot() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Peers = append([]PeerStatus(nil), s.st.Peers...)
	st.Unready = append([]string(nil), s.st.Unready...)
	if s.st.LastError != nil {
		e := *s.st.LastError
		st.LastError = &e
	}
	return st
}

// Inc adds d to a counter series.
func (s *State) Inc(series string, d float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.counters[series] += d
}

// Set sets a gauge series.
func (s *State) Set(series string, v float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.gauges[series] = v
}

// Metric returns a series' value (counters, then gauges).
func (s *State) Metric(series string) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m.counters[series]; ok {
		return v
	}
	return s.m.gauges[series]
}

// WriteMetrics writes the Prometheus text exposition, sorted.
func (s *State) WriteMetrics(w *strings.Builder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := map[string]float64{}
	for k, v := range s.m.counters {
		all[k] = v
	}
	for k, v := range s.m.gauges {
		all[k] = v
	}
	byName := map[string][]string{}
	for series := range all {
		name, _, _ := strings.Cut(series, "{")
		byName[name] = append(byName[name], series)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if h, ok := metricHelp[n]; ok {
			fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", n, h[1], n, h[0])
		}
		series := byName[n]
		sort.Strings(series)
		for _, sr := range series {
			fmt.Fprintf(w, "%s %g\n", sr, all[sr])
		}
	}
}

// Handler serves /metrics, /status, /readyz and /healthz.
func (s *State) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
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
	})
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.Snapshot())
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		st := s.Snapshot()
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
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if s.Metric("bindfn_agent_named_up") != 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "named is not running")
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}
