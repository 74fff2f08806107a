package pkggen

import (
	"reflect"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
)

// notVaried are the API fields the generator leaves alone, and why.
var notVaried = map[string]string{
	// Kubernetes pass-through structures: the generator sets common shapes
	// (requests/limits, one toleration); their sub-fields are k8s.io types.

	// Imported DNSSEC keys need their private files in the pod's Secret,
	// which the harness does not lay out; test/multipod's DNSSEC scenario
	// and internal/render's dnssec tests run importExisting with real keys.
	"BindCluster.spec.dnssec":                "imported DNSSEC keys (see above)",
	"BindCluster.spec.dnssec.importExisting": "imported DNSSEC keys (see above)",
	"BindCluster.spec.dnssec.publicKeys":     "imported DNSSEC keys (see above)",

	// Options only BIND 9.20 reads: the generated packages are checked by
	// 9.20 and again by 9.18 (make go-test-9.18), and they are rendered for
	// the default (9.20) image. TestDNSSECParentCheckConf and
	// TestDNSSECParentValidatesOnBIND (internal/render) run them on both
	// releases, a 9.18 image getting a located error.
	"BindDNSSECPolicy.spec.cdnskey":        "BIND 9.20 only (see above)",
	"BindDNSSECPolicy.spec.cdsDigestTypes": "BIND 9.20 only (see above)",
	"BindDNSSECPolicy.spec.checkDS":        "BIND 9.20 only (see above)",
	// parentInCluster needs a signed zone whose parent zone is a primary of
	// the same cluster, else it is an error: the generator draws zone names
	// independently. TestDNSSECParentGetsChildDS and test/multipod's
	// TestDNSSECParent cover it.
	"BindDNSSECPolicy.spec.parentalAgents.parentInCluster": "a parent zone in the cluster (see above)",
	// A rollover is a change between two renders: it starts from the
	// previous render's keys, which a one-render package does not have
	// (the rollover tests in internal/render draw the sequence instead).
	// Other signers' DNSKEYs are another provider's keys, refused on 9.18.
	"BindZone.spec.dnssecRollover":           "a change between two renders (see above)",
	"BindZone.spec.dnssecRollover.ksk":       "a change between two renders (see above)",
	"BindZone.spec.dnssecRollover.ksk.label": "a change between two renders (see above)",
	"BindZone.spec.dnssecRollover.ksk.done":  "a change between two renders (see above)",
	"BindZone.spec.dnssecRollover.zsk":       "a change between two renders (see above)",
	"BindZone.spec.dnssecRollover.zsk.label": "a change between two renders (see above)",
	"BindZone.spec.dnssecRollover.zsk.done":  "a change between two renders (see above)",
	"BindZone.spec.dnssecRollover.csk":       "a change between two renders (see above)",
	"BindZone.spec.dnssecRollover.csk.label": "a change between two renders (see above)",
	"BindZone.spec.dnssecRollover.csk.done":  "a change between two renders (see above)",
	"BindZone.spec.dnssecOtherSigners":       "another provider's DNSKEYs: TestBINDMultiSigner (9.20 only; 9.18 refuses them)",

	// spec.monitoring renders Prometheus and Grafana objects, nothing BIND
	// reads: the differential test has nothing to compare. internal/render's
	// monitoring golden, internal/monitoring's promtool tests and
	// test/multipod's TestMonitoringLab (a real Prometheus) cover it.
	"BindCluster.spec.monitoring":                     "not read by BIND (see above)",
	"BindCluster.spec.monitoring.podMonitor":          "not read by BIND (see above)",
	"BindCluster.spec.monitoring.prometheusRule":      "not read by BIND (see above)",
	"BindCluster.spec.monitoring.rulesFile":           "not read by BIND (see above)",
	"BindCluster.spec.monitoring.dashboard":           "not read by BIND (see above)",
	"BindCluster.spec.monitoring.labels":              "not read by BIND (see above)",
	"BindCluster.spec.monitoring.signatureExpiryDays": "not read by BIND (see above)",
	"BindCluster.spec.monitoring.servfailPercent":     "not read by BIND (see above)",

	// spec.tls and spec.replication.transferTLS need a certificate Secret
	// in the pod (named refuses to start without its files), which the
	// differential harness does not lay out. internal/render's tls golden
	// (named-checkconf 9.18 and 9.20), internal/validate's tls-* cases and
	// test/multipod's TestTLSLab and TestTLSReplicationLab cover them.
	"BindCluster.spec.replication.transferTLS":                "a certificate Secret in the pod (see above)",
	"BindCluster.spec.replication.transferTLS.mode":           "a certificate Secret in the pod (see above)",
	"BindCluster.spec.replication.transferTLS.remoteHostname": "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls":                                    "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.secretName":                         "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.dot":                                "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.dot.port":                           "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.doh":                                "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.doh.port":                           "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.doh.path":                           "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.certificate":                        "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.certificate.issuerRef":              "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.certificate.issuerRef.name":         "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.certificate.issuerRef.kind":         "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.certificate.issuerRef.group":        "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.certificate.dnsNames":               "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.certificate.duration":               "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.certificate.renewBefore":            "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.transfers":                          "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.transfers.mode":                     "a certificate Secret in the pod (see above)",
	"BindCluster.spec.tls.transfers.remoteHostname":           "a certificate Secret in the pod (see above)",
}

// apiFields are the spec field paths of the nine kinds, from the Go types'
// JSON tags, descending into the project's own structs (not k8s.io types).
func apiFields() []string {
	kinds := map[string]any{
		"BindCluster": v1alpha1.BindClusterSpec{}, "BindTSIGKey": v1alpha1.BindTSIGKeySpec{},
		"BindACL": v1alpha1.BindACLSpec{}, "BindDNSSECPolicy": v1alpha1.BindDNSSECPolicySpec{},
		"BindView": v1alpha1.BindViewSpec{}, "BindZone": v1alpha1.BindZoneSpec{},
		"BindCatalogZone": v1alpha1.BindCatalogZoneSpec{}, "BindPolicy": v1alpha1.BindPolicySpec{},
		"DNSRecord": v1alpha1.DNSRecordSpec{},
	}
	var out []string
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || !strings.HasSuffix(t.PkgPath(), "api/v1alpha1") {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			out = append(out, prefix+"."+name)
			walk(prefix+"."+name, f.Type)
		}
	}
	for k, v := range kinds {
		walk(k+".spec", reflect.TypeOf(v))
	}
	return out
}
