package agent

import (
	"io"
	"strconv"

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
	Waiting            prometheus.Gauge
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
		Waiting:            gauge("bindfn_agent_waiting_for_input", "1 while a change waits for a file of a ConfigMap or Secret that has not arrived yet (not a failure until the wait bound)."),
	}
	m.registry.MustRegister(m.Reloads, m.ReloadFailures, m.PeerChanges, m.Convergences, m.UpdatedRRsets,
		m.ConvergenceSeconds, m.NamedUp, m.Ready, m.ConfigError, m.LastApply, m.Waiting)
	return m
}

// stateCollector exports what /status says, for alerts that must name a
// zone or a file: the pod's role (bindfn_agent_info), each zone the
// readiness loop found not loaded (bindfn_agent_zone_unready, the zone as
// /status and /readyz list it: "zone" or "zone/view"), and while the
// mounted config is rejected, where named-checkconf located the error
// (bindfn_agent_config_error_info). Read at scrape time from the status,
// so the metrics and /status never disagree.
type stateCollector struct {
	m        *Metrics
	snapshot func() Status
	info     *prometheus.Desc
	unready  *prometheus.Desc
	cfgErr   *prometheus.Desc
}

var _ prometheus.Collector = (*stateCollector)(nil)

// watchState registers the collector of the status snapshot returns.
func (m *Metrics) watchState(snapshot func() Status) {
	m.registry.MustRegister(&stateCollector{
		m: m, snapshot: snapshot,
		info: prometheus.NewDesc("bindfn_agent_info",
			"The agent's version and the pod's role (primary|secondary); always 1.", []string{"role", "version"}, nil),
		unready: prometheus.NewDesc("bindfn_agent_zone_unready",
			"1 for each zone of the pod's role that named has not loaded (as /status lists it: zone or zone/view); no series when every zone is loaded.", []string{"zone"}, nil),
		cfgErr: prometheus.NewDesc("bindfn_agent_config_error_info",
			"1 while the mounted config is rejected, with the file and line named-checkconf reported (empty when it gave none).", []string{"file", "line"}, nil),
	})
}

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.info
	ch <- c.unready
	ch <- c.cfgErr
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.snapshot()
	ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, string(st.Role), st.Version)
	seen := map[string]bool{}
	for _, z := range st.Unready {
		if !seen[z] {
			seen[z] = true
			ch <- prometheus.MustNewConstMetric(c.unready, prometheus.GaugeValue, 1, z)
		}
	}
	if e := st.LastError; e != nil && gaugeValue(c.m.ConfigError) == 1 {
		line := ""
		if e.Line > 0 {
			line = strconv.Itoa(e.Line)
		}
		ch <- prometheus.MustNewConstMetric(c.cfgErr, prometheus.GaugeValue, 1, e.File, line)
	}
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
