package agent

import (
	"io"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Label values of the agent's metrics.
const (
	// reload kinds: the rndc command that applied a change.
	kindReconfig = "reconfig"
	kindReload   = "reload"
	kindZone     = "zone" // rndc addzone, modzone, delzone
	// failure stages: where a change stopped.
	stageCheckconf = "checkconf"
	stageRNDC      = "rndc"
	stagePrepare   = "prepare"
	// convergence results.
	resultOK    = "ok"
	resultError = "error"
	// UPDATE operations.
	opReplace = "replace"
	opDelete  = "delete"
)

// Metrics are the agent's own Prometheus metrics (bindfn_agent_*), each
// declared here once; every label value the agent uses starts at zero.
type Metrics struct {
	registry *prometheus.Registry

	Reloads            *prometheus.CounterVec // kind
	ReloadFailures     *prometheus.CounterVec // stage
	PeerChanges        prometheus.Counter
	Convergences       *prometheus.CounterVec // result
	UpdatedRRsets      *prometheus.CounterVec // op
	ConvergenceSeconds prometheus.Gauge
	NamedUp            prometheus.Gauge
	Ready              prometheus.Gauge
	ConfigError        prometheus.Gauge
	LastApply          prometheus.Gauge
}

func newMetrics() *Metrics {
	counter := func(name, help string, label string, values ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
		for _, v := range values {
			c.WithLabelValues(v)
		}
		return c
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	m := &Metrics{
		registry: prometheus.NewPedanticRegistry(),
		Reloads: counter("bindfn_agent_reloads_total",
			"Config or zone changes applied to named (kind=reconfig: rndc reconfig; kind=reload: rndc reload of the changed zones; kind=zone: rndc addzone, modzone or delzone of the changed zones).", "kind", kindReconfig, kindReload, kindZone),
		ReloadFailures: counter("bindfn_agent_reload_failures_total",
			"Changes not applied (stage=checkconf|rndc|prepare).", "stage", stageCheckconf, stageRNDC, stagePrepare),
		PeerChanges: prometheus.NewCounter(prometheus.CounterOpts{Name: "bindfn_agent_peer_changes_total",
			Help: "Times the resolved server lists changed."}),
		Convergences: counter("bindfn_agent_update_convergence_total",
			"Dynamic zone convergence passes (result=ok|error).", "result", resultOK, resultError),
		UpdatedRRsets: counter("bindfn_agent_update_rrsets_total",
			"RRsets written by UPDATE (op=replace|delete).", "op", opReplace, opDelete),
		ConvergenceSeconds: gauge("bindfn_agent_update_convergence_last_seconds", "Duration of the last convergence pass."),
		NamedUp:            gauge("bindfn_agent_named_up", "1 while named runs."),
		Ready:              gauge("bindfn_agent_ready", "1 when every zone of the pod's role is loaded."),
		ConfigError:        gauge("bindfn_agent_config_error", "1 while the mounted config is rejected and not applied."),
		LastApply:          gauge("bindfn_agent_last_apply_timestamp_seconds", "Unix time of the last applied change."),
	}
	m.registry.MustRegister(m.Reloads, m.ReloadFailures, m.PeerChanges, m.Convergences, m.UpdatedRRsets,
		m.ConvergenceSeconds, m.NamedUp, m.Ready, m.ConfigError, m.LastApply)
	return m
}

// write writes the Prometheus text exposition, sorted by name and labels.
func (m *Metrics) write(w io.Writer) error {
	mfs, err := m.registry.Gather()
	if err != nil {
		return err
	}
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	return nil
}

// gaugeValue is a gauge's current value.
func gaugeValue(g prometheus.Gauge) float64 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		return 0
	}
	return m.GetGauge().GetValue()
}
