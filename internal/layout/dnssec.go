package layout

// DNSSEC signing keys: rendered once, kept across renders, shipped in one
// Secret per cluster, installed by the agent into named's key-directory.
const (
	// DNSSECDir is the mount of the cluster's DNSSEC key Secret
	// (<cluster>-dnssec, optional): K<zone>_<alg>_<tag>.{key,private,state}.
	DNSSECDir = "/etc/bind-fn/dnssec"
	// DNSSECKeySubdir is the key-directory of every signed zone, under
	// DataDir (the rendered `key-directory`): the agent installs the keys
	// from DNSSECDir there before named loads the zones.
	DNSSECKeySubdir = "primary"
	// DSFile in the DS ConfigMap holds every signed zone's DS records
	// (SHA-256), one per line, ready for the parent zone or registrar.
	DSFile = "ds.txt"
	// TrustAnchorsFile in the DS ConfigMap is a named.conf/delv
	// `trust-anchors` statement with the same DS records (static-ds).
	TrustAnchorsFile = "trust-anchors.conf"
	// DNSSECKeysAnnotation on the DS ConfigMap records each signed zone's
	// DNSKEYs (algorithm/flags/tag) at the last render: a change of the
	// key Secret under a signed zone is flagged against it.
	DNSSECKeysAnnotation = "bind.unkin.net/dnssec-keys"
	// DNSSECRolloversAnnotation on the DS ConfigMap records each signed
	// zone's key rollovers (label, old and new key tag, done) at the last
	// render: the next render takes the rollover's next step from it.
	DNSSECRolloversAnnotation = "bind.unkin.net/dnssec-rollovers"
)

// DNSSECSecretName is the Secret of a cluster's DNSSEC keys.
func DNSSECSecretName(cluster string) string { return cluster + "-dnssec" }

// DSConfigMapName is the ConfigMap of a cluster's DS records.
func DSConfigMapName(cluster string) string { return cluster + "-dnssec-ds" }
