package layout

import "path"

// TLS (docs/tls.md): the spec.tls Secret is mounted at TLSDir, in
// cert-manager's format. The agent hashes the directory with the other
// mounts: a changed certificate is checked (TLSCheck) and taken with
// rndc reconfig, which makes named load it again.
const (
	TLSDir = "/etc/bind-fn/tls"
	// TLSCertFile, TLSKeyFile and TLSCAFile are the keys of a
	// kubernetes.io/tls Secret as cert-manager writes it.
	TLSCertFile = "tls.crt"
	TLSKeyFile  = "tls.key"
	TLSCAFile   = "ca.crt"
	// TLSServerName is the tls block of the DoT and DoH listeners and
	// of the XoT server; TLSClientName the secondaries' strict client
	// block; DoHName the http block.
	TLSServerName = "bind-fn-tls"
	TLSClientName = "bind-fn-xot"
	// TLSUpstreamName is a secondary cluster's relay's strict client
	// block: it verifies the primary cluster's certificate.
	TLSUpstreamName = "bind-fn-xot-upstream"
	DoHName         = "bind-fn-doh"
)

// CertificateName is the cert-manager Certificate of spec.tls.certificate.
func CertificateName(cluster string) string { return cluster + "-tls" }

// TLSFile is a file of the TLS Secret in the pod.
func TLSFile(name string) string { return path.Join(TLSDir, name) }

// TLSCheck is what the agent checks in TLSDir before named reads it:
// the certificate and key are there, belong together and are valid now;
// with RequireCA, ca.crt is there and the certificate chains to it.
type TLSCheck struct {
	Secret    string `json:"secret"`
	RequireCA bool   `json:"requireCA,omitempty"`
}
