package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterMode is what a BindCluster serves.
// +kubebuilder:validation:Enum=authoritative;resolver
type ClusterMode string

// Cluster modes.
const (
	ModeAuthoritative ClusterMode = "authoritative"
	ModeResolver      ClusterMode = "resolver"
)

// BindClusterSpec describes a BIND deployment: pod 0 is the primary, the
// others are secondaries that transfer every zone from it.
type BindClusterSpec struct {
	// Mode is authoritative (no recursion, zones served to the world) or
	// resolver (recursion for allowRecursion, forwarders, DNSSEC validation).
	// +kubebuilder:default=authoritative
	// +optional
	Mode ClusterMode `json:"mode,omitempty"`

	// Replicas is the number of BIND pods: pod 0 is the primary, the rest
	// secondaries.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=1
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Image is the BIND image the named container runs.
	// +kubebuilder:default="git.unkin.net/unkin/bind-fn/bind9:9.20.30-1-deb13u1"
	// +optional
	Image string `json:"image,omitempty"`

	// ImagePullPolicy of the BIND and agent containers.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// Agent configures the in-pod agent that wraps named.
	// +optional
	Agent *AgentSpec `json:"agent,omitempty"`

	// Resources of the named container (named and the agent that runs it).
	// Unset fields get defaults: a memory request that follows the zones'
	// records and the recursive views, a memory limit of twice the
	// request, a CPU request of 100m and no CPU limit (docs/resources.md).
	// max-cache-size follows the memory limit.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// NodeSelector of the pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of the pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// PriorityClassName of the pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// ExtraOptions are extra statements for the options block, one per item
	// ("minimal-responses yes"). They are parsed and checked: statements the
	// function owns (directory, allow-transfer, ...) are refused.
	// +optional
	ExtraOptions []string `json:"extraOptions,omitempty"`

	// AllowQuery is the address match list allowed to query (default any).
	// +optional
	AllowQuery []string `json:"allowQuery,omitempty"`

	// AllowRecursion is the address match list allowed recursion in resolver
	// mode (default localnets; localhost).
	// +optional
	AllowRecursion []string `json:"allowRecursion,omitempty"`

	// Forwarders for a resolver (global forwarding).
	// +optional
	Forwarders []string `json:"forwarders,omitempty"`

	// ForwardOnly makes a resolver use only its forwarders (forward only).
	// +optional
	ForwardOnly bool `json:"forwardOnly,omitempty"`

	// DNSSECValidation for a resolver: auto (default), yes or no.
	// +kubebuilder:validation:Enum=auto;"yes";"no"
	// +optional
	DNSSECValidation string `json:"dnssecValidation,omitempty"`

	// IPv6 adds listen-on-v6 and dual-stack Services.
	// +optional
	IPv6 bool `json:"ipv6,omitempty"`

	// QueryLogging switches on query logging (to stderr).
	// +optional
	QueryLogging bool `json:"queryLogging,omitempty"`

	// RateLimit configures response rate limiting (authoritative servers
	// facing the internet).
	// +optional
	RateLimit *RateLimitSpec `json:"rateLimit,omitempty"`

	// HiddenPrimary keeps pod 0 out of the serve Service: only secondaries
	// answer queries.
	// +optional
	HiddenPrimary bool `json:"hiddenPrimary,omitempty"`

	// PrimaryService is the stable address of pod 0 for transfers and
	// dynamic updates (<cluster>-primary). Always rendered; this tunes it.
	// +optional
	PrimaryService *ClusterServiceSpec `json:"primaryService,omitempty"`

	// Service is the serve VIP (<cluster>): queries on 53/UDP and 53/TCP.
	// +optional
	Service *ClusterServiceSpec `json:"service,omitempty"`

	// Storage keeps the data directory (dynamic zones, journals, DNSSEC keys)
	// on a PersistentVolumeClaim per pod. Without it the data directory is an
	// emptyDir, reseeded from the rendered zones when a pod starts.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`

	// DNSSEC configures the signing keys of the cluster's signed zones. By
	// default bind-fn generates them once and keeps them in the Secret
	// <cluster>-dnssec.
	// +optional
	DNSSEC *DNSSECKeysSpec `json:"dnssec,omitempty"`

	// Secrets says who makes the cluster's key Secrets. rendered (the
	// default): bind-fn generates the material of every TSIG key not
	// imported (the transfer key <cluster>-xfr-tsig included) and of the
	// DNSSEC keys, and writes it into the package (<cluster>-keys holds
	// the key statements the pods mount). external: the render writes no
	// key material at all. Every TSIG key is then imported (as with
	// importExisting), the cluster's own transfer key too, the DNSSEC
	// keys come from spec.dnssec.publicKeys, and the pods mount the
	// Secrets made elsewhere (External Secrets, SOPS, Vault); the render
	// names each Secret it expects, with its data keys, in an info
	// result (docs/security.md). A BindTSIGKey without clusterRef is
	// shared by the namespace's clusters: if one of them is external, no
	// cluster renders it.
	// +optional
	Secrets SecretsMode `json:"secrets,omitempty"`

	// PodCIDRs and ServiceCIDRs are the cluster's pod and service address
	// ranges; an input address inside them is flagged (it would churn).
	// +optional
	PodCIDRs []string `json:"podCIDRs,omitempty"`
	// +optional
	ServiceCIDRs []string `json:"serviceCIDRs,omitempty"`

	// ClusterDomain is the Kubernetes cluster's DNS domain (default
	// cluster.local). A primary zone without spec.nameservers gets the serve
	// Service's name in it as its apex NS: <cluster>.<namespace>.svc.<clusterDomain>.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`

	// Replication places the cluster in a topology of BindClusters that run
	// in different Kubernetes clusters and serve each other: this cluster is
	// a secondary cluster of primaryClusterRef, or it feeds secondary
	// clusters and is hidden (docs/multi-cluster.md).
	// +optional
	Replication *ReplicationSpec `json:"replication,omitempty"`

	// NetworkPolicy shapes the cluster's NetworkPolicy (<cluster>), which
	// is rendered by default: DNS (53/UDP, 53/TCP) from dnsFrom, transfers
	// and NOTIFYs between the cluster's pods and its linked clusters', the
	// agent's port from metricsFrom, nothing else (docs/security.md).
	// +optional
	NetworkPolicy *NetworkPolicySpec `json:"networkPolicy,omitempty"`

	// Monitoring renders objects for Prometheus and Grafana: a PodMonitor,
	// the alert rules (as a PrometheusRule and as a plain rules file) and a
	// dashboard; none by default (docs/monitoring.md).
	// +optional
	Monitoring *MonitoringSpec `json:"monitoring,omitempty"`

	// TLS serves DNS over TLS and HTTPS from a certificate Secret and
	// can move transfers onto TLS (docs/tls.md).
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`
}

// MonitoringSpec chooses the monitoring objects of a cluster. The
// PodMonitor and PrometheusRule are prometheus-operator's
// (monitoring.coreos.com/v1); the rules file and the dashboard are
// ConfigMaps any Prometheus or Grafana can mount.
type MonitoringSpec struct {
	// PodMonitor renders PodMonitor <cluster>: every pod's agent port
	// (/metrics: the agent's bindfn_agent_* and BIND's bind_* metrics),
	// with the cluster's name as label bindfn_cluster, which the rules and
	// the dashboard select by.
	// +optional
	PodMonitor bool `json:"podMonitor,omitempty"`

	// PrometheusRule renders PrometheusRule <cluster> with the cluster's
	// alert rules.
	// +optional
	PrometheusRule bool `json:"prometheusRule,omitempty"`

	// RulesFile renders the same rules as a plain Prometheus rules file:
	// key bind-fn.rules.yaml of ConfigMap <cluster>-prometheus-rules, for
	// a Prometheus without the operator (rule_files).
	// +optional
	RulesFile bool `json:"rulesFile,omitempty"`

	// Dashboard renders the Grafana dashboard: key bind-fn-<cluster>.json
	// of ConfigMap <cluster>-dashboard, labelled grafana_dashboard: "1" for
	// Grafana's dashboard sidecar.
	// +optional
	Dashboard bool `json:"dashboard,omitempty"`

	// Labels are added to every monitoring object, e.g. the release label
	// a Prometheus's podMonitorSelector and ruleSelector match.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// SignatureExpiryDays: BindSignaturesExpiring fires when a signed
	// zone's earliest signature expires within this many days (default 7).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=365
	// +optional
	SignatureExpiryDays int32 `json:"signatureExpiryDays,omitempty"`

	// ServfailPercent: BindServfailHigh fires when more than this share of
	// a pod's answers over 10 minutes are SERVFAIL (default 5).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	ServfailPercent int32 `json:"servfailPercent,omitempty"`
}

// NetworkPolicySpec tunes the cluster's NetworkPolicy. It governs ingress
// only: the pods' own connections (to the API server, the cluster DNS,
// primary clusters, forwarders) are not restricted.
type NetworkPolicySpec struct {
	// Enabled renders the NetworkPolicy (default true). false renders none,
	// for clusters whose policies are managed elsewhere.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// DNSFrom are the peers that may send queries to 53/UDP and 53/TCP
	// (default: every pod and every address). The cluster's own pods and
	// the pods of the BindClusters it replicates with are always allowed.
	// A peer is an ipBlock, or a podSelector and/or a namespaceSelector,
	// as in a NetworkPolicy.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	DNSFrom []networkingv1.NetworkPolicyPeer `json:"dnsFrom,omitempty"`

	// MetricsFrom are the peers that may reach the agent's port
	// (spec.agent.metricsPort: /metrics, /status, /readyz), e.g. the
	// Prometheus namespace (default: none; the kubelet's probes come from
	// the node, which NetworkPolicy implementations admit).
	// +kubebuilder:validation:MaxItems=64
	// +optional
	MetricsFrom []networkingv1.NetworkPolicyPeer `json:"metricsFrom,omitempty"`
}

// SecretsMode says who makes a cluster's key Secrets.
// +kubebuilder:validation:Enum=rendered;external
type SecretsMode string

// Secrets modes.
const (
	SecretsRendered SecretsMode = "rendered"
	SecretsExternal SecretsMode = "external"
)

// ReplicationSpec makes a BindCluster a secondary cluster of another one (in
// another Kubernetes cluster, rendered from the same package): its pod 0
// transfers every zone and the catalog of the primary cluster, signed with a
// key the two share, and relays them to its own pods; the primary cluster
// NOTIFYs it. Addresses are stable names or addresses that exist before any
// pod does (a LoadBalancer address, a DNS name the agent resolves), never
// pod IPs.
type ReplicationSpec struct {
	// PrimaryClusterRef names the BindCluster (same namespace, same package)
	// this cluster is a secondary cluster of. A secondary cluster may feed
	// secondary clusters of its own (tiers); loops are refused.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PrimaryClusterRef string `json:"primaryClusterRef,omitempty"`

	// PrimaryAddresses are where this cluster's pod 0 reaches the primary
	// cluster's <cluster>-primary Service: its LoadBalancer addresses, or
	// DNS names this cluster's resolver answers. Required with
	// primaryClusterRef.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	PrimaryAddresses []string `json:"primaryAddresses,omitempty"`

	// NotifyAddresses are where the primary cluster reaches this cluster's
	// <cluster>-primary Service (pod 0, which relays every change to the
	// other pods): LoadBalancer addresses or DNS names the primary
	// cluster's resolver answers. Required with primaryClusterRef.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	NotifyAddresses []string `json:"notifyAddresses,omitempty"`

	// TransferKeyRef names the BindTSIGKey both clusters share (no
	// clusterRef): it signs the transfers and NOTIFYs between them. Only
	// this key admits them across; its Secret must exist in both
	// Kubernetes clusters (rendered into both output directories, or
	// importExisting from one vault). Required with primaryClusterRef.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TransferKeyRef string `json:"transferKeyRef,omitempty"`

	// Zones limits the secondary cluster to these zones of the primary
	// cluster (default: every primary zone). Not with a catalog: a catalog
	// brings every member zone to every cluster that consumes it.
	// +kubebuilder:validation:MaxItems=4096
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	Zones []string `json:"zones,omitempty"`

	// Hidden: the cluster only feeds its secondary clusters. No serve
	// Service is rendered and its named answers queries signed with a
	// transfer key only (the secondaries' and the agent's): clients query
	// the secondary clusters. Needs at least one secondary cluster.
	// +optional
	Hidden bool `json:"hidden,omitempty"`

	// TransferTLS makes this cluster's pod 0 transfer from the primary
	// cluster over TLS (the primary cluster needs spec.tls); strict
	// verifies its certificate with this cluster's ca.crt (spec.tls).
	// +optional
	TransferTLS *TransferTLSSpec `json:"transferTLS,omitempty"`
}

// AgentSpec configures the in-pod agent.
type AgentSpec struct {
	// Image holding the agent binary (copied in by an init container).
	// +optional
	Image string `json:"image,omitempty"`

	// ResolveIntervalSeconds is how often the agent re-resolves peers.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ResolveIntervalSeconds int32 `json:"resolveIntervalSeconds,omitempty"`

	// MetricsPort serves /metrics, /status, /readyz (default 9119).
	// +optional
	MetricsPort int32 `json:"metricsPort,omitempty"`

	// Resources of the install-agent init container, which copies the
	// agent binary (default: requests 10m CPU and 32Mi, limit 64Mi). The
	// agent itself runs in the named container: see spec.resources.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// ClusterServiceSpec tunes a rendered Service.
type ClusterServiceSpec struct {
	// Type of the Service (default ClusterIP).
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +optional
	Type corev1.ServiceType `json:"type,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	ClusterIP string `json:"clusterIP,omitempty"`
	// +optional
	LoadBalancerIP string `json:"loadBalancerIP,omitempty"`
	// +optional
	LoadBalancerClass *string `json:"loadBalancerClass,omitempty"`
	// ExternalTrafficPolicy (LoadBalancer/NodePort). Local preserves client
	// addresses, which views and ACLs that match by address need; it is the
	// default when any view or ACL matches by address.
	// +kubebuilder:validation:Enum=Cluster;Local
	// +optional
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`
}

// DNSSECKeysSpec says where a cluster's DNSSEC signing keys come from.
type DNSSECKeysSpec struct {
	// ImportExisting: the Secret <cluster>-dnssec is managed elsewhere
	// (Vault, External Secrets, SealedSecrets) and holds every signed zone's
	// K<zone>_<alg>_<tag>.key and .private files (BIND's files, with "+" as
	// "_"); bind-fn never writes it, so no private key enters the package.
	// +optional
	ImportExisting bool `json:"importExisting,omitempty"`

	// PublicKeys are the DNSKEY records of the imported keys, as in their
	// .key files ("example.com. IN DNSKEY 257 3 13 ..."): public, so they
	// can live in git. bind-fn checks them against the zones' policies and
	// outputs their DS records. Required for every signed zone with
	// importExisting.
	// +kubebuilder:validation:MaxItems=512
	// +kubebuilder:validation:items:MaxLength=2048
	// +optional
	PublicKeys []string `json:"publicKeys,omitempty"`
}

// StorageSpec asks for a PersistentVolumeClaim per pod.
type StorageSpec struct {
	// Size of the claim (default 1Gi).
	// +optional
	Size string `json:"size,omitempty"`
	// StorageClassName of the claim.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// RateLimitSpec is BIND's rate-limit (RRL).
type RateLimitSpec struct {
	// +kubebuilder:validation:Minimum=0
	// +optional
	ResponsesPerSecond int32 `json:"responsesPerSecond,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Window int32 `json:"window,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Slip *int32 `json:"slip,omitempty"`
	// +optional
	Exempt []string `json:"exempt,omitempty"`
}

// BindClusterStatus is not written by bind-fn (it is a pure function); it is
// kept so manifests exported from the old operator decode.
type BindClusterStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	AppliedConfig map[string]string `json:"appliedConfig,omitempty"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BindCluster is a BIND deployment.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bc
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
type BindCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BindClusterSpec   `json:"spec,omitempty"`
	Status BindClusterStatus `json:"status,omitempty"`
}

// BindClusterList is a list of BindCluster.
// +kubebuilder:object:root=true
type BindClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BindCluster `json:"items"`
}
