package objects

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// PodPlan is what the renderer decided about the pod's volumes.
type PodPlan struct {
	// ZoneConfigMaps are the names of the zones ConfigMap shards; shard i is
	// mounted at layout.ZonesDir/<i>.
	ZoneConfigMaps []string
	// KeySecrets are the TSIG key Secrets (generated and imported) mounted at
	// layout.KeysDir/<name>. They are mounted in sorted order whatever order
	// they come in.
	KeySecrets []string
	// ConfigHash is reserved and deliberately unused: nothing derived from
	// configuration content may enter the pod template, or every config
	// change would roll the pods (docs/design.md#no-runtime-address).
	ConfigHash string
}

// The ISC image (internetsystemsconsortium/bind9, Alpine based) creates the
// bind user and group with uid and gid 53 (`addgroup -S -g 53 bind && adduser
// -S -u 53 ... bind`) and owns its own directories by them. The pod runs as
// that user from the start, so named is never root and needs no -u.
const (
	BindUID int64 = 53
	BindGID int64 = 53
)

// Names of the pod's containers and volumes.
const (
	ContainerNamed        = "named"
	ContainerInstallAgent = "install-agent"

	VolumeConfig   = "config"
	VolumeKeys     = "keys"
	VolumeRun      = "run"
	VolumeData     = "data"
	VolumeAgentBin = "agent-bin"
	VolumeAPIToken = "api-token"
	// VolumeConfigLive and VolumeZonesLive are where the agent lays the
	// config and zones ConfigMaps from the API server (agent/watch.go).
	VolumeConfigLive = "config-live"
	VolumeZonesLive  = "zones-live"
)

// ZonesVolumeName is the volume of zones shard i.
func ZonesVolumeName(i int) string { return "zones-" + strconv.Itoa(i) }

// KeyVolumeName is the volume of an imported key Secret. Secret names may be
// longer than a volume name (63) or hold dots, so the volume is named by a
// hash of the Secret's name; the mount path carries the name itself.
func KeyVolumeName(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "key-" + hex.EncodeToString(sum[:5])
}

// ZoneShardCapacity is how many zones ConfigMap slots the pod mounts for n
// shards: at least 4, doubling as the package grows.
func ZoneShardCapacity(n int) int {
	c := 4
	for c < n {
		c *= 2
	}
	return c
}

// AgentCommand is the named container's command: the agent, which selects
// the role by ordinal and runs `named -g` under it.
func AgentCommand(c *model.Cluster, p PodPlan) []string {
	cmd := []string{
		layout.AgentBin, "run",
		"--config", layout.ConfigFile(layout.AgentConfig),
		"--listen", ":" + strconv.Itoa(int(c.MetricsPort())),
		"--drain", strconv.Itoa(DrainSeconds) + "s",
	}
	for _, w := range WatchedConfigMaps(c, p) {
		cmd = append(cmd, "--configmap", w.Name+"="+w.Live+":"+w.Mount)
	}
	if c.Spec.HiddenPrimary {
		// On ordinal 0, /readyz answers 503: see ServeService.
		cmd = append(cmd, "--hidden-primary")
	}
	return cmd
}

// DrainCommand is the named container's preStop hook: the agent's drain,
// asked over its control socket (agent.DefaultControlSocket).
func DrainCommand() []string { return []string{layout.AgentBin, "drain"} }

// DrainSeconds is how long a deleted pod keeps serving before named is
// stopped. The preStop hook (DrainCommand) asks the agent to drain, which
// makes /readyz answer 503 at once and returns after DrainSeconds; only then does the
// kubelet send SIGTERM. Serving while terminating is not enough: kube-proxy
// keeps a UDP flow's conntrack entry (a client that reuses its source port:
// CoreDNS's forward plugin, a node-local cache, any long-lived socket) on an
// endpoint for as long as it is serving, terminating or not, so a pod must be
// seen unready (readiness failures, the EndpointSlice's serving=false, every
// kube-proxy's sync, which deletes those entries) while named still answers.
// The readiness probe notices within ReadinessPeriodSeconds ×
// ReadinessFailureThreshold (6 s); the rest is for the EndpointSlice
// controller and kube-proxy, which CI saw take more than 5 s. named has the
// grace period's other 15 s to stop.
const DrainSeconds = 15

// The readiness probe's period and failure threshold: a draining pod is
// unready after at most their product.
const (
	ReadinessPeriodSeconds    = 2
	ReadinessFailureThreshold = 3
)

// TerminationGracePeriodSeconds covers the drain and named's own stop.
const TerminationGracePeriodSeconds = 30

// DefaultStorageSize is the data claim size when spec.storage.size is empty.
const DefaultStorageSize = "1Gi"

// StatefulSet is the cluster's servers: pod 0 runs the primary config, the
// others the secondary config, chosen by the agent at start.
//
// The pod template depends on the cluster spec (image, resources,
// scheduling, agent settings) and on the set of volumes in p, never on
// configuration content: config changes reach the pods through their
// whole-volume mounts (never subPath, which kubelet never updates) and the
// agent's reload, not through a roll.
func StatefulSet(c *model.Cluster, p PodPlan) *appsv1.StatefulSet {
	sp := c.Spec
	replicas := sp.Replicas
	if replicas < 1 {
		replicas = 1
	}
	// One pod at a time. A hidden primary is never ready and counts as
	// unavailable for ever; allowing two keeps secondaries rolling one at a
	// time (MaxUnavailableStatefulSet, beta and on from Kubernetes 1.35;
	// older servers drop the field and roll one at a time, pod 0 last).
	maxUnavailable := intstr.FromInt32(1)
	if sp.HiddenPrimary {
		maxUnavailable = intstr.FromInt32(2)
	}

	volumes, mounts := podVolumes(c, p)
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: objectMeta(c, c.Name, ComponentServer, nil, nil),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr(replicas),
			ServiceName:         layout.HeadlessServiceName(c.Name),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type:          appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &maxUnavailable},
			},
			Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(c)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels: Labels(c, ComponentServer),
					// Static: kubectl logs/exec pick named, not the init container.
					Annotations: map[string]string{"kubectl.kubernetes.io/default-container": ContainerNamed},
				},
				Spec: podSpec(c, p, volumes, mounts),
			},
		},
	}
	if sp.Storage != nil {
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{dataClaim(c)}
	}
	return sts
}

func podSpec(c *model.Cluster, p PodPlan, volumes []corev1.Volume, mounts []corev1.VolumeMount) corev1.PodSpec {
	sp := c.Spec
	sel := &metav1.LabelSelector{MatchLabels: SelectorLabels(c)}
	var tolerations []corev1.Toleration
	for i := range sp.Tolerations {
		tolerations = append(tolerations, *sp.Tolerations[i].DeepCopy())
	}
	return corev1.PodSpec{
		// The pod's own ServiceAccount reads the cluster's ConfigMaps and
		// nothing else (AgentRBAC); its token reaches the named container
		// alone, through the api-token volume, not the automount.
		ServiceAccountName:            layout.AgentServiceAccountName(c.Name),
		AutomountServiceAccountToken:  ptr(false),
		EnableServiceLinks:            ptr(false),
		TerminationGracePeriodSeconds: ptr(int64(TerminationGracePeriodSeconds)),
		PriorityClassName:             sp.PriorityClassName,
		NodeSelector:                  copyMap(sp.NodeSelector),
		Tolerations:                   tolerations,
		SecurityContext:               podSecurityContext(),
		Affinity: &corev1.Affinity{
			PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
					Weight: 100,
					PodAffinityTerm: corev1.PodAffinityTerm{
						LabelSelector: sel,
						TopologyKey:   corev1.LabelHostname,
					},
				}},
			},
		},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel},
			// Zones too, where the nodes have them; a no-op where they do not.
			{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel},
		},
		InitContainers: []corev1.Container{installAgent(c)},
		Containers:     []corev1.Container{named(c, p, mounts)},
		Volumes:        volumes,
	}
}

// podSecurityContext runs the pod as the image's bind user.
//
// named must bind port 53 without being root. A capability added in the
// container securityContext does not reach a non-root process (Kubernetes
// sets no ambient capabilities, and the ISC image's named carries no file
// capabilities), so NET_BIND_SERVICE alone would not do. The pod lowers
// net.ipv4.ip_unprivileged_port_start to 53 instead: a namespaced sysctl of
// the pod's own network namespace, on Kubernetes' safe list (allowed by
// default since 1.22, and by the baseline and restricted Pod Security
// Standards); it covers IPv6 too. NET_BIND_SERVICE is still added, the one
// capability the restricted standard allows, for runtimes that grant it.
func podSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:        ptr(true),
		RunAsUser:           ptr(BindUID),
		RunAsGroup:          ptr(BindGID),
		FSGroup:             ptr(BindGID),
		FSGroupChangePolicy: ptr(corev1.FSGroupChangeOnRootMismatch),
		SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		Sysctls:             []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: strconv.Itoa(layout.DNSPort)}},
	}
}

func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		RunAsNonRoot:             ptr(true),
		Capabilities: &corev1.Capabilities{
			Drop: []corev1.Capability{"ALL"},
			Add:  []corev1.Capability{"NET_BIND_SERVICE"},
		},
	}
}

// installAgent copies the agent binary from its image into the agent-bin
// emptyDir, where the named container (the BIND image) runs it.
func installAgent(c *model.Cluster) corev1.Container {
	sc := containerSecurityContext()
	sc.Capabilities.Add = nil
	return corev1.Container{
		Name:            ContainerInstallAgent,
		Image:           agentImage(c),
		ImagePullPolicy: c.Spec.ImagePullPolicy,
		Command:         []string{"/bind-fn-agent", "copy-self", layout.AgentBin},
		// spec.agent.resources over the model's defaults.
		Resources:                *c.Resources.InstallAgent.DeepCopy(),
		SecurityContext:          sc,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		VolumeMounts:             []corev1.VolumeMount{{Name: VolumeAgentBin, MountPath: layout.AgentBinDir}},
	}
}

// named is the BIND container, run by the agent.
func named(c *model.Cluster, p PodPlan, mounts []corev1.VolumeMount) corev1.Container {
	httpGet := func(p string) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: p, Port: intstr.FromString(PortMetrics)}}
	}
	return corev1.Container{
		Name:            ContainerNamed,
		Image:           image(c),
		ImagePullPolicy: c.Spec.ImagePullPolicy,
		Command:         AgentCommand(c, p),
		Env: []corev1.EnvVar{
			{Name: "HOSTNAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		},
		Ports: append([]corev1.ContainerPort{
			{Name: PortDNS, ContainerPort: layout.DNSPort, Protocol: corev1.ProtocolUDP},
			{Name: PortDNSTCP, ContainerPort: layout.DNSPort, Protocol: corev1.ProtocolTCP},
			{Name: PortMetrics, ContainerPort: c.MetricsPort(), Protocol: corev1.ProtocolTCP},
		}, tlsContainerPorts(c)...),
		// spec.resources over the model's defaults: the memory request
		// follows the zones' records and the recursive views
		// (docs/resources.md).
		Resources: *c.Resources.Named.DeepCopy(),
		// The agent answers /healthz as soon as it runs; a big zone set may
		// take minutes to load, which readiness (not liveness) waits for.
		StartupProbe: &corev1.Probe{
			ProbeHandler: httpGet("/healthz"), PeriodSeconds: 2, TimeoutSeconds: 2, FailureThreshold: 60,
		},
		// Ready: every configured zone is loaded (and, with a hidden
		// primary, not pod 0: see ServeService).
		ReadinessProbe: &corev1.Probe{
			ProbeHandler: httpGet("/readyz"), PeriodSeconds: ReadinessPeriodSeconds, TimeoutSeconds: 2,
			FailureThreshold: ReadinessFailureThreshold, SuccessThreshold: 1,
		},
		// Alive: the agent is; it restarts named itself. Generous, so a
		// slow reload or a busy node never kills a serving nameserver.
		LivenessProbe: &corev1.Probe{
			ProbeHandler: httpGet("/healthz"), PeriodSeconds: 10, TimeoutSeconds: 5, FailureThreshold: 6,
		},
		// A deleted pod drains (DrainSeconds): the agent turns readiness
		// off while named keeps answering, until the pod is out of every
		// Service and kube-proxy has dropped its UDP flows; only then does
		// the kubelet send SIGTERM and named stop. The hook runs in the
		// container and asks the agent over its control socket in the run
		// directory, so nothing on the network can drain a pod (an httpGet
		// hook comes from the node to the pod IP: it could only reach a
		// listener anyone else on the network reaches too).
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
			Exec: &corev1.ExecAction{Command: DrainCommand()},
		}},
		SecurityContext:          containerSecurityContext(),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		VolumeMounts:             mounts,
	}
}

// podVolumes returns the volumes and the named container's mounts. Every
// ConfigMap and Secret is a whole-volume mount, read-only; the run, data and
// agent-bin directories are writable. Mounts are sorted by path (a parent
// before its children).
func podVolumes(c *model.Cluster, p PodPlan) ([]corev1.Volume, []corev1.VolumeMount) {
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	add := func(v corev1.Volume, mountPath string, readOnly bool) {
		vols = append(vols, v)
		mounts = append(mounts, corev1.VolumeMount{Name: v.Name, MountPath: mountPath, ReadOnly: readOnly})
	}
	cm := func(name, cmName string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cmName},
		}}}
	}
	// Secrets are readable by the bind group only (fsGroup owns them).
	secret := func(name, secretName string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secretName, DefaultMode: ptr(int32(0o440)),
		}}}
	}

	// The kubelet's mounts of the ConfigMaps, and the directories named
	// reads, which the agent lays from the API server or these mounts.
	add(cm(VolumeConfig, layout.ConfigMapName(c.Name)), layout.MountedConfigDir, true)
	add(corev1.Volume{Name: VolumeConfigLive, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, layout.ConfigDir, false)
	add(corev1.Volume{Name: VolumeZonesLive, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, layout.ZonesDir, false)
	add(apiTokenVolume(), layout.ServiceAccountDir, true)
	// Zone shards: a fixed capacity of slots (optional ConfigMaps), so that
	// a package growing by a shard changes no volume until it outgrows the
	// capacity, which doubles.
	for i := 0; i < ZoneShardCapacity(len(p.ZoneConfigMaps)); i++ {
		v := cm(ZonesVolumeName(i), layout.ZonesConfigMapName(c.Name, i))
		if i >= len(p.ZoneConfigMaps) {
			v.ConfigMap.Optional = ptr(true)
		} else {
			v.ConfigMap.Name = p.ZoneConfigMaps[i]
		}
		add(v, path.Join(layout.MountedZonesDir, strconv.Itoa(i)), true)
	}
	// Every generated key lives in the one keys Secret; imported key
	// Secrets are mounted one by one, under volume names derived from the
	// Secret's name so that adding one does not rename the others. With
	// spec.secrets external every key is imported and there is no keys
	// Secret: the kubelet starts the pod once every named Secret exists,
	// and the agent writes each key statement from it (agent/prepare.go).
	if !c.ExternalSecrets() {
		add(secret(VolumeKeys, layout.KeysSecretName(c.Name)), path.Join(layout.KeysDir, layout.KeysSecretName(c.Name)), true)
	}
	keys := slices.Clone(p.KeySecrets)
	sort.Strings(keys)
	keys = slices.Compact(keys)
	for _, name := range keys {
		add(secret(KeyVolumeName(name), name), path.Join(layout.KeysDir, name), true)
	}
	add(dnssecVolume(c), layout.DNSSECDir, true)
	if v, ok := tlsVolume(c); ok {
		add(v, layout.TLSDir, true)
	}
	// The runtime directory holds small generated includes and the pid file.
	add(corev1.Volume{Name: VolumeRun, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		Medium: corev1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("16Mi")),
	}}}, layout.RunDir, false)
	if c.Spec.Storage == nil {
		add(corev1.Volume{Name: VolumeData, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, layout.DataDir, false)
	} else {
		// From the volumeClaimTemplate of the same name.
		mounts = append(mounts, corev1.VolumeMount{Name: VolumeData, MountPath: layout.DataDir})
	}
	add(corev1.Volume{Name: VolumeAgentBin, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, layout.AgentBinDir, false)

	sort.SliceStable(mounts, func(i, j int) bool { return mounts[i].MountPath < mounts[j].MountPath })
	return vols, mounts
}

// StorageSize is the data claim size: spec.storage.size, or
// DefaultStorageSize when it is empty or not a quantity (Validate reports
// the latter).
func StorageSize(c *model.Cluster) resource.Quantity {
	if c.Spec.Storage != nil && c.Spec.Storage.Size != "" {
		if q, err := resource.ParseQuantity(c.Spec.Storage.Size); err == nil {
			return q
		}
	}
	return resource.MustParse(DefaultStorageSize)
}

// dataClaim is the per-pod claim of the data directory.
func dataClaim(c *model.Cluster) corev1.PersistentVolumeClaim {
	pvc := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:   VolumeData,
			Labels: Labels(c, ComponentServer),
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: StorageSize(c)},
			},
		},
	}
	if sc := c.Spec.Storage.StorageClassName; sc != nil {
		pvc.Spec.StorageClassName = ptr(*sc)
	}
	return pvc
}

// image and agentImage fall back to the model's defaults for a spec that was
// not defaulted (the model defaults both).
func image(c *model.Cluster) string {
	if c.Spec.Image != "" {
		return c.Spec.Image
	}
	return model.DefaultImage
}

func agentImage(c *model.Cluster) string {
	if c.Spec.Agent != nil && c.Spec.Agent.Image != "" {
		return c.Spec.Agent.Image
	}
	return model.DefaultAgentImage
}
