// Package layout is the contract between the rendered objects and the in-pod
// agent: where every file lives in the pod, what the rendered objects are
// called, and the agent's configuration document. The renderer writes to it,
// the agent reads it, and the multi-pod tests lay files out by it.
package layout

import (
	"fmt"
	"path"
	"strings"
)

// Paths inside the named container.
const (
	// ConfigDir holds the <cluster>-config ConfigMap: named.conf.primary,
	// named.conf.secondary, agent.json. In a rendered pod it is a writable
	// directory the agent lays from the API server, the kubelet's mount at
	// MountedConfigDir the fallback (agent/watch.go).
	ConfigDir = "/etc/bind-fn/config"
	// ZonesDir holds one directory per zones ConfigMap shard:
	// ZonesDir/<shard>/<file>, laid as ConfigDir is, from MountedZonesDir.
	ZonesDir = "/etc/bind-fn/zones"
	// MountedConfigDir and MountedZonesDir are the kubelet's mounts of the
	// same ConfigMaps, which it updates only when it syncs the pod.
	MountedConfigDir = "/etc/bind-fn/mounted/config"
	MountedZonesDir  = "/etc/bind-fn/mounted/zones"
	// ServiceAccountDir is where the agent (as every in-cluster client)
	// reads its service account token, the cluster's CA and the namespace.
	ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	// KeysDir holds one mount per TSIG key Secret: KeysDir/<secret>/{key.conf,secret,...}.
	KeysDir = "/etc/bind-fn/keys"
	// RNDCDir is where earlier renders mounted a <cluster>-rndc Secret
	// (rndc.key); the agent copies a key found there, else makes its own.
	RNDCDir = "/etc/bind-fn/rndc"
	// RunDir is the agent's writable runtime directory (emptyDir): the server
	// lists it resolves, key includes for imported Secrets, the active
	// named.conf link and named's pid file.
	RunDir = "/run/bind-fn"
	// DataDir is named's writable directory (PVC or emptyDir): dynamic and
	// signed zones, journals, DNSSEC keys, transferred secondary zones.
	DataDir = "/var/lib/bind"
	// AgentBin is where the init container copies the agent.
	AgentBin = "/bind-fn/bin/bind-fn-agent"
	// AgentBinDir is the emptyDir the agent binary is copied into.
	AgentBinDir = "/bind-fn/bin"
)

// Files.
const (
	NamedConfPrimary   = "named.conf.primary"
	NamedConfSecondary = "named.conf.secondary"
	AgentConfig        = "agent.json"
	// ServersInclude is written by the agent: `primaries "<list>" { ip key "k"; ... };`
	// for every list in the agent config. The rendered named.conf includes it.
	ServersInclude = "servers.conf"
	// PeersACL is the ACL the agent defines in ServersInclude: every
	// resolved peer address. Response rate limiting exempts it.
	PeersACL = "bind-fn-peers"
	// PrimaryPodList is the ACL-only server list of the secondaries: the
	// primary pod's own headless name. NOTIFYs leave from that address, not
	// the primary Service's, and BIND sends the TCP retry of a NOTIFY whose
	// UDP attempt failed without its TSIG key (notify_send_toaddr hands the
	// key to the first attempt); allow-notify admits it through PeersACL.
	// The dot keeps it apart from every view's list name (views are
	// DNS-1123 labels).
	PrimaryPodList = "bind-fn-primary.pod"
	// ActiveConf is the link the agent points at the primary or secondary config.
	ActiveConf  = "named.conf"
	RNDCKeyFile = "rndc.key"
	// RNDCKeyName is the rndc key's name in named.conf and rndc.key.
	RNDCKeyName = "bind-fn-rndc"
	// DNSPort is where named serves queries, transfers and updates.
	DNSPort = 53
	// RNDCPort is where named's control channel listens (localhost only).
	RNDCPort = 953
	// StatisticsPort is BIND's statistics-channels (localhost only).
	StatisticsPort = 8053
	// DefaultMetricsPort is the agent's HTTP port (/metrics, /status, /readyz).
	DefaultMetricsPort = 9119
	// KeyConfFile is the key statement inside a generated TSIG key Secret.
	KeyConfFile = "key.conf"
)

// Path helpers.
func ConfigFile(name string) string          { return path.Join(ConfigDir, name) }
func ZoneFile(shard int, file string) string { return path.Join(ZonesDir, fmt.Sprint(shard), file) }
func KeyFile(secret, file string) string     { return path.Join(KeysDir, secret, file) }
func RunFile(name string) string             { return path.Join(RunDir, name) }

// DataPath is a file or directory under DataDir, its path elements joined:
// DataPath("primary", "db.example.com") is /var/lib/bind/primary/db.example.com.
func DataPath(elem ...string) string { return path.Join(append([]string{DataDir}, elem...)...) }

// KeysSecretName is the Secret holding the key statement of every key the
// function generates for a cluster, one file per key. One Secret, mounted
// once at KeysDir/<KeysSecretName>, so that adding or removing a key (or a
// view, which brings a transfer key) never changes the pod template.
func KeysSecretName(cluster string) string { return cluster + "-keys" }

// GeneratedKeyFile is the include of a generated key in the pod.
func GeneratedKeyFile(cluster, secret string) string {
	return KeyFile(KeysSecretName(cluster), secret+".conf")
}

// ImportedKeyInclude is the file the agent writes for an imported key Secret.
func ImportedKeyInclude(secret string) string { return path.Join(RunDir, "keys", secret+".conf") }

// Object names, per cluster.
func ConfigMapName(cluster string) string { return cluster + "-config" }
func ZonesConfigMapName(cluster string, shard int) string {
	return fmt.Sprintf("%s-zones-%d", cluster, shard)
}

// RNDCSecretName is the rndc Secret earlier renders wrote (no longer rendered).
func RNDCSecretName(cluster string) string      { return cluster + "-rndc" }
func HeadlessServiceName(cluster string) string { return cluster + "-headless" }
func PrimaryServiceName(cluster string) string  { return cluster + "-primary" }
func ServeServiceName(cluster string) string    { return cluster }
func PDBName(cluster string) string             { return cluster }
func NetworkPolicyName(cluster string) string   { return cluster }

// AgentServiceAccountName is the pods' ServiceAccount; its Role reads the
// cluster's own ConfigMaps and nothing else.
func AgentServiceAccountName(cluster string) string { return cluster + "-agent" }

// TransferKeySecretName is the Secret of a generated intra-cluster transfer
// key (when no catalog names one). view is "" without views.
func TransferKeySecretName(cluster, view string) string {
	if view == "" {
		return cluster + "-xfr-tsig"
	}
	return cluster + "-" + view + "-xfr-tsig"
}

// Server list names in named.conf (filled by the agent).
func PrimaryListName(view string) string {
	if view == "" {
		return "bind-fn-primary"
	}
	return "bind-fn-primary-" + view
}
func SecondariesListName(view string) string {
	if view == "" {
		return "bind-fn-secondaries"
	}
	return "bind-fn-secondaries-" + view
}

// UpstreamListName is the server list of a secondary cluster's pod 0: the
// primary cluster's addresses (spec.replication.primaryAddresses), each
// entry signed with the key the clusters share.
const UpstreamListName = "bind-fn-upstream"

// RemoteListName is the server list of a cluster's pod 0 that a secondary
// cluster's NOTIFYs go to (its spec.replication.notifyAddresses).
func RemoteListName(cluster string) string { return "bind-fn-remote-" + cluster }

// Zone shards (docs/state.md#shards). Nothing in <cluster>-config grows
// with the zone count: each zone's file, its zone statements and its part
// of the agent's configuration live in one zones ConfigMap, the shard its
// key hashes to (ShardOf).
const (
	// ZonesDocFile is, in every zones ConfigMap, the agent's configuration
	// of that shard's zones (ZonesDoc). agent.json lists every shard's at
	// ZoneDocs; the agent appends them to its own lists.
	ZonesDocFile = "agent-zones.json"
)

// ZonesConfFile is, in every zones ConfigMap, the zone statements of that
// shard's zones for one role ("primary" or "secondary") and one view (""
// without views): zones.primary.conf, zones.secondary.<view>.conf. Every
// shard has one per role and view (a comment when it has no zone there), and
// the role's named.conf includes each, inside its view's block, in shard
// order.
func ZonesConfFile(role, view string) string {
	if view == "" {
		return "zones." + role + ".conf"
	}
	return "zones." + role + "." + view + ".conf"
}

// ShardOf is the shard, of shards in all, of a ConfigMap key: a zone's file
// name (model.ZoneFileName; a zone without a file, e.g. a forward zone, by
// the name its file would have), a part's name, a tombstone's zone file
// name. It is linear hashing over FNV-1a (64 bits) of the key: with
// 2^k <= shards < 2^(k+1), the key's hash modulo 2^(k+1), or modulo 2^k
// when that is not below shards. One more shard splits one shard (number
// shards-2^k) in two and moves nothing else; the count itself is the
// renderer's (render.shardCount), from the total size alone.
func ShardOf(key string, shards int) int {
	return ShardOfHash(KeyHash(key), shards)
}

// KeyHash is FNV-1a (64 bits) of key, which ShardOf places by.
func KeyHash(key string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return h
}

// ShardOfHash is ShardOf of a key's hash.
func ShardOfHash(h uint64, shards int) int {
	if shards <= 1 {
		return 0
	}
	lo := uint64(1)
	for lo*2 <= uint64(shards) {
		lo *= 2
	}
	if b := h % (lo * 2); b < uint64(shards) {
		return int(b)
	}
	return int(h % lo)
}

// ZonesDoc is one shard's part of the agent's configuration (ZonesDocFile):
// the per-zone lists of AgentConfigDoc, for the zones of that shard.
type ZonesDoc struct {
	SeedZones      []SeedZone    `json:"seedZones,omitempty"`
	DNSSECZones    []string      `json:"dnssecZones,omitempty"`
	DynamicZones   []DynamicZone `json:"dynamicZones,omitempty"`
	PrimaryZones   []ZoneRef     `json:"primaryZones,omitempty"`
	SecondaryZones []ZoneRef     `json:"secondaryZones,omitempty"`
}

// AddZones appends a shard's lists to the agent's configuration.
func (c *AgentConfigDoc) AddZones(d ZonesDoc) {
	c.SeedZones = append(c.SeedZones, d.SeedZones...)
	c.DNSSECZones = append(c.DNSSECZones, d.DNSSECZones...)
	c.DynamicZones = append(c.DynamicZones, d.DynamicZones...)
	c.PrimaryZones = append(c.PrimaryZones, d.PrimaryZones...)
	c.SecondaryZones = append(c.SecondaryZones, d.SecondaryZones...)
}

// ZonesDocPath is shard's ZonesDocFile in the pod.
func ZonesDocPath(shard int) string { return ZoneFile(shard, ZonesDocFile) }

// AgentConfigDoc is agent.json: everything the agent needs that the render knows.
type AgentConfigDoc struct {
	// Cluster name and namespace.
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	// PrimaryConf and SecondaryConf are the config file paths by role.
	PrimaryConf   string `json:"primaryConf"`
	SecondaryConf string `json:"secondaryConf"`
	// ServerLists are resolved into RunDir/servers.conf.
	ServerLists []ServerList `json:"serverLists"`
	// ImportedKeys get an include written from their Secret's `secret` (and
	// optional `algorithm`) keys.
	ImportedKeys []ImportedKey `json:"importedKeys,omitempty"`
	// DataDirs are the directories under DataDir (relative paths) that the
	// rendered config writes into — transferred secondary zones, catalog
	// member zones, seeded primaries — created by the agent before named
	// starts: named does not create them and would not save the zones.
	DataDirs []string `json:"dataDirs,omitempty"`
	// SeedZones are copied into DataDir once (dynamic and signed zones).
	SeedZones []SeedZone `json:"seedZones,omitempty"`
	// DNSSECZones are the signed zones (bare names): the primary installs
	// their keys from DNSSECDir before named loads them (dnssec.go).
	DNSSECZones []string `json:"dnssecZones,omitempty"`
	// DynamicRecords are the desired RRsets of dynamic zones, converged by
	// TSIG-signed UPDATE on the primary.
	DynamicZones []DynamicZone `json:"dynamicZones,omitempty"`
	// Zones are every zone named serves, per role, for readiness.
	PrimaryZones   []ZoneRef `json:"primaryZones"`
	SecondaryZones []ZoneRef `json:"secondaryZones"`
	// Views are the transfer key of each view (one entry with an empty View
	// for a cluster without views): the agent signs its loopback readiness
	// queries for a view's zones, and NOTIFYs to a moved secondary, with it.
	Views []ViewKey `json:"views,omitempty"`
	// ZoneDocs are the pod paths of every shard's ZonesDocFile, in shard
	// order: the per-zone lists above (seeds, signed, dynamic, primary and
	// secondary zones) live there, each zone's in its own shard; the agent
	// appends them (AddZones) after reading agent.json. The lists above
	// hold what is not a shard's: the catalog zones.
	ZoneDocs []string `json:"zoneDocs,omitempty"`
	// ResolveIntervalSeconds between peer resolutions.
	ResolveIntervalSeconds int `json:"resolveIntervalSeconds"`
	// MetricsPort for /metrics, /status, /readyz.
	MetricsPort int `json:"metricsPort"`
	// TLS is checked in TLSDir before every start and reconfig (tls.go).
	TLS *TLSCheck `json:"tls,omitempty"`
}

// ServerList is a named list of peers for `primaries "<Name>" { ... }`.
type ServerList struct {
	Name string `json:"name"`
	// Role is which pods use it: "primary" (also-notify targets) or
	// "secondary" (transfer source).
	Role string `json:"role"`
	// Hosts are DNS names to resolve (A and AAAA); every address gets Key.
	Hosts []string `json:"hosts"`
	// Key is the TSIG key name each entry carries.
	Key string `json:"key"`
	// Port, when not 0, is written into every entry (`<ip> port <p> key
	// "k";`); 0 leaves BIND's default (53). Tests on loopback use it.
	Port int `json:"port,omitempty"`
	// ACLOnly lists are resolved into PeersACL only: no primaries list is
	// written for them and a secondary does not wait for them to resolve.
	ACLOnly bool `json:"aclOnly,omitempty"`
	// TLS, when set, is written into every entry (`tls "<name>"`): the
	// zones transfer over TLS (Port is then the TLS port, 0 BIND's 853).
	TLS string `json:"tls,omitempty"`
}

// ImportedKey is a TSIG key whose Secret is managed elsewhere.
type ImportedKey struct {
	KeyName   string `json:"keyName"`
	Algorithm string `json:"algorithm"`
	Secret    string `json:"secret"` // Secret name, mounted at KeysDir/<Secret>
	Include   string `json:"include"`
}

// SeedZone is a rendered zone file copied once into the data directory.
type SeedZone struct {
	Zone   string `json:"zone"`
	View   string `json:"view,omitempty"`
	Source string `json:"source"` // file in a zones ConfigMap mount
	Dest   string `json:"dest"`   // file under DataDir
	// Refresh: copied again whenever Source changes (an inline-signed
	// zone: named never writes its raw file, and reloads it on rndc reload).
	Refresh bool `json:"refresh,omitempty"`
}

// DynamicZone lists the desired RRsets of a dynamic zone.
type DynamicZone struct {
	Zone    string `json:"zone"`
	View    string `json:"view,omitempty"`
	KeyName string `json:"keyName"`
	// KeyFile is the include holding the update key (generated or imported).
	KeyFile string `json:"keyFile"`
	// Source is the rendered zone file (in a zones ConfigMap mount, its
	// parts joined by $INCLUDE) whose records, the SOA and apex NS left
	// out, are the desired RRsets: they travel once, in ConfigMaps split
	// under the budget, not in agent.json. Records is read when it is empty.
	Source string `json:"source,omitempty"`
	// RRsets in presentation format, one line per RR, sorted.
	Records []string `json:"records,omitempty"`
}

// ZoneRef names a zone and its view.
type ZoneRef struct {
	Zone string `json:"zone"`
	View string `json:"view,omitempty"`
	// Type is the zone's BIND type when its answers are not authoritative
	// (ZoneTypeStub, ZoneTypeMirror, ZoneTypeStaticStub, ZoneTypeRedirect):
	// the agent's readiness asks such a zone for what it can show. Empty
	// for a primary or secondary zone, which must answer its SOA with AA.
	Type string `json:"type,omitempty"`
}

// The zone types whose readiness is not an authoritative SOA (ZoneRef.Type).
const (
	ZoneTypeStub       = "stub"
	ZoneTypeMirror     = "mirror"
	ZoneTypeStaticStub = "static-stub"
	ZoneTypeRedirect   = "redirect"
)

// ViewKey is the TSIG key whose signed queries land in a view: every view's
// match-clients starts with `key "<its transfer key>"`. The agent checks
// that a view's zones are loaded with SOA queries over loopback signed with
// it, and signs the NOTIFYs it sends to a secondary that moved.
type ViewKey struct {
	View    string `json:"view,omitempty"`
	KeyName string `json:"keyName"`
	// KeyFile is the include holding the key statement (generated or imported).
	KeyFile string `json:"keyFile"`
}

// RNDCKeyInclude is the rndc key file the rendered named.conf includes:
// RunDir/rndc.key, key RNDCKeyName, which the agent writes before named
// starts from crypto/rand (kept across container restarts: RunDir is the
// pod's emptyDir), so the key never leaves the pod and no Secret holds it.
// A pod that still mounts an rndc Secret at RNDCDir (renders before this
// one) gets a copy of that key there instead.
func RNDCKeyInclude() string { return path.Join(RunDir, RNDCKeyFile) }

// AgentStateFile is where the agent records the RRsets it owns in dynamic
// zones (so it can remove them when they are no longer desired).
func AgentStateFile() string { return DataPath("bind-fn-agent-state.json") }

// ZoneStateAnnotation is where releases before the per-zone state
// kept every zone's serial and hash, on the <cluster>-config ConfigMap
// (zonefile.State by ZoneStateKey): one line for all zones, so two branches
// that changed two zones always conflicted in git. It is read once, for the
// serials of zones removed before the upgrade, and no longer written
// (docs/state.md).
const ZoneStateAnnotation = "bind.unkin.net/zone-state"

// ZoneStateKey is a zone's key in ZoneStateAnnotation: the zone name
// without its trailing dot, after "<view>/" when the cluster has views.
func ZoneStateKey(view, zone string) string {
	if zone != "." {
		zone = strings.TrimSuffix(zone, ".")
	}
	if view == "" {
		return zone
	}
	return view + "/" + zone
}

// RemovedZonePrefix starts the key, in a zones ConfigMap, of a removed
// zone's tombstone: RemovedZonePrefix + the zone's file name. A zone's state
// is its own file (its SOA serial, its content hashed); once the zone is
// removed the tombstone keeps its last serial and hash, so that restored it
// goes on above the serial secondaries may still hold. No zone file name
// starts so (they start with db., catalog. or rpz.).
const RemovedZonePrefix = "removed."

// ZonesShard is the shard number of a zones ConfigMap of cluster (the
// inverse of ZonesConfigMapName), false for any other name.
func ZonesShard(cluster, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, cluster+"-zones-")
	if !ok || rest == "" || len(rest) > 9 || (rest[0] == '0' && len(rest) > 1) {
		return 0, false
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
