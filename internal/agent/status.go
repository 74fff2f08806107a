package agent

import (
	"context"
	"strings"
	"sync"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/version"
)

// Status is what /status reports.
type Status struct {
	// Version is the agent's build (internal/version): "v0.4.0", "dev".
	Version string `json:"version"`
	Role    Role   `json:"role"`
	Ordinal int    `json:"ordinal"`
	// AppliedConfigHash is the hash of the mounted config, keys and zones
	// that named last accepted.
	AppliedConfigHash string       `json:"appliedConfigHash"`
	LastApply         *time.Time   `json:"lastApply,omitempty"`
	Peers             []PeerStatus `json:"peers"`
	LastError         *ErrorStatus `json:"lastError,omitempty"`
	// SeenHash is the hash of the mounted inputs the agent last acted upon
	// (applied, waited for, or refused), in AppliedConfigHash's form.
	SeenHash string `json:"seenHash,omitempty"`
	// Waiting is the file a change waits for ("waiting for <file> from
	// ConfigMap <name>"): not applied yet, not failed (arrival.go).
	Waiting  string   `json:"waiting,omitempty"`
	Ready    bool     `json:"ready"`
	Unready  []string `json:"unready,omitempty"`
	NamedPID int      `json:"namedPID,omitempty"`
	// HiddenPrimary makes /readyz answer 503 on the primary even when its
	// zones are loaded, so the serve Service selects only secondaries.
	HiddenPrimary bool `json:"hiddenPrimary,omitempty"`
	// DrainingSince is when the drain (the preStop hook, POST /drain on
	// the control socket) was first asked:
	// from then on /readyz answers 503 while named keeps answering.
	DrainingSince   *time.Time   `json:"drainingSince,omitempty"`
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
	Updated   int `json:"updated"`
	Removed   int `json:"removed"`
	Unchanged int `json:"unchanged"`
	// Messages are the UPDATE messages the pass sent, Transfers the zones
	// it read by AXFR (none when every zone's serial was the converged one).
	Messages  int       `json:"messages"`
	Transfers int       `json:"transfers"`
	Seconds   float64   `json:"seconds"`
	Error     string    `json:"error,omitempty"`
	Time      time.Time `json:"time"`
}

// State is the agent's shared, locked view for the HTTP endpoints.
type State struct {
	mu      sync.Mutex
	st      Status
	metrics *Metrics
	// extra appends more metrics after the agent's own (BIND's statistics);
	// set before serving.
	extra func(ctx context.Context, w *strings.Builder)
	// drain is how long a drain holds.
	drain time.Duration
}

// SetDrain sets how long a drain holds the pod unready before it returns;
// call it before ControlHandler serves.
func (s *State) SetDrain(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drain = d
}

// beginDrain marks the pod draining, once: a second call (the hook run again)
// keeps the first start. It returns when the drain ends.
func (s *State) beginDrain() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.DrainingSince == nil {
		t := time.Now()
		s.st.DrainingSince = &t
	}
	return s.st.DrainingSince.Add(s.drain)
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
	s := &State{st: Status{Version: version.Get().Version, Role: role, Ordinal: ordinal, Peers: []PeerStatus{}}, metrics: newMetrics()}
	s.metrics.watchState(s.Snapshot)
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
	if s.st.DrainingSince != nil {
		t := *s.st.DrainingSince
		st.DrainingSince = &t
	}
	if s.st.LastError != nil {
		e := *s.st.LastError
		st.LastError = &e
	}
	return st
}

// Metrics returns the agent's metrics.
func (s *State) Metrics() *Metrics { return s.metrics }

// WriteMetrics writes the agent's metrics in the Prometheus text format.
func (s *State) WriteMetrics(w *strings.Builder) {
	_ = s.metrics.write(w) // a strings.Builder does not fail; the metrics are fixed
}
