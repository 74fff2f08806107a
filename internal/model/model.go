package model

import (
	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
	"github.com/miekg/dns"
	"net/netip"
)

// Defaults the function applies (the CRDs carry the same ones).
const (
	// DefaultImage and DefaultAgentImage are in images_gen.go, generated
	// from release/images.yaml (make generate).
	DefaultAlgorithm = vocab.DefaultTSIG
	DefaultTTL       = 3600
	DefaultRefresh   = 300
	DefaultRetry     = 60
	DefaultExpire    = 1209600
	DefaultMinimum   = 60
	DefaultResolve   = 5
)

// Cluster is the resolved desired state of one BindCluster.
type Cluster struct {
	Src       diag.Source
	Name      string
	Namespace string
	// Spec with defaults applied.
	Spec v1alpha1.BindClusterSpec
	// ACLs, Keys and DNSSECPolicies in scope (the cluster's own and the
	// namespace's shared ones), sorted by name.
	ACLs           []*ACL
	Keys           []*Key
	DNSSECPolicies []*DNSSECPolicy
	// Views, sorted by order then name. Without BindViews there is exactly
	// one view with Name "" that is rendered without a view statement.
	Views []*View
	// HasViews reports whether the cluster has BindViews.
	HasViews bool
	// ExtraOptions are spec.extraOptions, parsed and checked, sorted by name.
	ExtraOptions []nc.Stmt
	// extraIndex is the spec.extraOptions entry that set each option.
	extraIndex map[string]int
	// Resources are the containers' resources, defaults applied, and the
	// cache size they leave named.
	Resources Resources
	// The spec's lists, parsed (bad elements reported and left out):
	// AllowRecursion has its default (localnets, localhost) when empty.
	AllowQuery, AllowRecursion, RateLimitExempt AML
	Forwarders                                  Servers
	// Upstream is set on a secondary cluster (spec.replication), Downstreams
	// (sorted by name) on every cluster that feeds secondary clusters.
	Upstream    *Upstream
	Downstreams []*Downstream
	// NetworkPolicy is spec.networkPolicy, checked; nil when disabled.
	NetworkPolicy *NetworkPolicy
	// TLS is spec.tls, checked (tls.go); nil without it or when it is bad.
	TLS *TLS
}

// ExternalSecrets reports spec.secrets external: the render writes no key
// material; every key Secret is made elsewhere.
func (c *Cluster) ExternalSecrets() bool { return c.Spec.Secrets == v1alpha1.SecretsExternal }

// DNSSECImported reports that the cluster's DNSSEC keys are made
// elsewhere (spec.dnssec.importExisting, or spec.secrets external): the
// render reads their public halves from spec.dnssec.publicKeys.
func (c *Cluster) DNSSECImported() bool {
	return c.ExternalSecrets() || c.Spec.DNSSEC != nil && c.Spec.DNSSEC.ImportExisting
}

// ACL is a named address match list.
type ACL struct {
	Src      diag.Source
	Name     string
	Elements []string
	// List is Elements, parsed.
	List AML
}

// Key is a TSIG key known to the cluster.
type Key struct {
	Src        diag.Source
	KeyName    string
	Algorithm  string
	SecretName string
	// Import: the Secret is made elsewhere (spec.importExisting, or a
	// cluster in whose scope the key is has spec.secrets external).
	Import bool
	// External: imported only because a cluster has spec.secrets external
	// (not spec.importExisting).
	External bool
	Template *v1alpha1.SecretMetadata
	// Internal marks a key the function made up (a view's transfer key when
	// no catalog names one); Src is then the cluster's.
	Internal bool
}

// DNSSECPolicy is a dnssec-policy.
type DNSSECPolicy struct {
	Src  diag.Source
	Name string
	Spec v1alpha1.BindDNSSECPolicySpec
	// Keys (one csk when the spec has none) and Durations are the spec's,
	// parsed; a bad one is reported while resolving and left out.
	Keys      []PolicyKey
	Durations []PolicyDuration
	// MaxZoneTTL (0: no limit) is the longest TTL named loads in a zone signed with this
	// policy: spec.maxZoneTTL, or BIND's default.
	MaxZoneTTL uint64
	// CDSDigests are spec.cdsDigestTypes, lower case, checked (nil: BIND's
	// default, sha-256); ParentalAgents spec.parentalAgents.addresses,
	// parsed (port 0: BIND's 53).
	CDSDigests     []string
	ParentalAgents []netip.AddrPort
}

// View is one view (or the implicit default view).
type View struct {
	Src               diag.Source
	Name              string
	Order             int32
	MatchClients      []string
	MatchDestinations []string
	Recursion         *bool
	// MatchClientsList (any when empty) and MatchDestinationsList are the
	// lists, parsed.
	MatchClientsList, MatchDestinationsList AML
	// AllowRecursion is the view's own allow-recursion as written, and
	// AllowRecursionList parsed (both nil: the cluster's).
	AllowRecursion     []string
	AllowRecursionList AML
	// TransferKey is presented by the secondaries to transfer every zone of
	// the view and signs the primary's NOTIFYs.
	TransferKey *Key
	Catalog     *Catalog
	Zones       []*Zone
	Policies    []*Policy
}

// Catalog is the view's catalog zone.
type Catalog struct {
	Src              diag.Source
	ZoneName         string // canonical, trailing dot
	DefaultPrimaries []string
	// DefaultPrimariesList is DefaultPrimaries, parsed.
	DefaultPrimariesList Servers
}

// Zone is a resolved zone.
type Zone struct {
	Src diag.Source
	// Name is canonical: lower case with a trailing dot.
	Name string
	Spec v1alpha1.BindZoneSpec
	View *View
	// RRsets from spec.records and DNSRecords, in input order.
	RRsets []*RRset
	// UpdateKey of a dynamic zone; TransferKey presented to external primaries.
	UpdateKey   *Key
	TransferKey *Key
	DNSSEC      *DNSSECPolicy
	// Rollovers are spec.dnssecRollover, checked against the policy, in
	// role order (ksk, zsk, csk).
	Rollovers []Rollover
	// OtherSigners are spec.dnssecOtherSigners, read (owner: the zone).
	OtherSigners []*dns.DNSKEY
	// CatalogMember: listed in the view's catalog (secondaries get it from there).
	CatalogMember bool
	// The spec's lists, parsed (bad elements reported and left out).
	AllowTransfer, AllowQuery         AML
	Primaries, AlsoNotify, Forwarders Servers
}

// Writable reports whether named must write the zone file (dynamic or signed).
func (z *Zone) Writable() bool {
	return z.Spec.Type == v1alpha1.ZonePrimary && (z.Spec.DynamicUpdate || z.DNSSEC != nil)
}

// RRset is one RRset as the user wrote it.
type RRset struct {
	Src   diag.Source
	Field string // spec.records[3] or spec (DNSRecord)
	// Name as written (relative, "@", empty, or absolute).
	Name   string
	Type   string
	TTL    *int32
	Values []string
	// FromRecord: from a DNSRecord rather than BindZone.spec.records.
	FromRecord bool
}

// Policy is a response policy zone.
type Policy struct {
	Src      diag.Source
	ZoneName string
	Spec     v1alpha1.BindPolicySpec
}

// ClientAddressesMatter reports whether named decides anything by the
// client's source address: views matching clients, ACLs, allow-query,
// allow-recursion, or response rate limiting (which buckets clients by
// prefix). Behind SNAT every client would share a node's address.
func (c *Cluster) ClientAddressesMatter() bool {
	if len(c.ACLs) > 0 || len(c.Spec.AllowQuery) > 0 || len(c.Spec.AllowRecursion) > 0 || c.Spec.RateLimit != nil {
		return true
	}
	if c.HasViews {
		for _, v := range c.Views {
			if len(v.MatchClients) > 0 {
				return true
			}
		}
	}
	return false
}

// MetricsPort is the agent's metrics port (default applied).
func (c *Cluster) MetricsPort() int32 {
	if c.Spec.Agent != nil && c.Spec.Agent.MetricsPort != 0 {
		return c.Spec.Agent.MetricsPort
	}
	return layout.DefaultMetricsPort
}
