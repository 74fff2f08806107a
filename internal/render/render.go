// Package render turns resolved clusters (internal/model) into Kubernetes
// objects: named.conf per role, zone files, agent config, the StatefulSet,
// Services, PodDisruptionBudget, ConfigMaps and Secrets. It is pure: the only
// input besides the model is the previous output (for serials and key
// material) and a source of randomness for new keys.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// ShardBudget is the most zone-file bytes one zones ConfigMap carries:
// Kubernetes refuses objects over 1 MiB, and metadata needs room.
const ShardBudget = 768 << 10

// Options of a render.
type Options struct {
	// Rand is the source of new key material (crypto/rand.Reader in production).
	Rand io.Reader
}

// Object is one rendered object and the file kpt writes it to.
type Object struct {
	Obj  any // a typed k8s.io/api object with TypeMeta set
	Path string
}

// Render renders every cluster, with the key material and serials prev
// kept from the previous output, and the zones built this run in zones
// (either may be nil), then checks its own output (SelfCheck). On any error
// the objects must not be used.
func Render(clusters []*model.Cluster, prev *prior.Previous, zones *zonefile.Cache, opt Options) ([]Object, diag.Results) {
	if prev == nil {
		prev = &prior.Previous{}
	}
	var out []Object
	var rs diag.Results
	seen := map[string]bool{}
	for _, c := range clusters {
		objs, crs := renderCluster(c, prev, zones, opt)
		rs = append(rs, crs...)
		for _, o := range objs {
			// A key shared by the namespace's clusters (no clusterRef) is
			// one Secret, rendered with the first cluster that uses it.
			// A cluster of a replication topology runs in a Kubernetes
			// cluster of its own: it gets its own copy (c.Site).
			if s, ok := o.Obj.(*corev1.Secret); ok {
				id := c.Site() + "/" + s.Namespace + "/" + s.Name
				if seen[id] {
					continue
				}
				seen[id] = true
			}
			out = append(out, o)
		}
	}
	rs = append(rs, SelfCheck(clusters, out)...)
	return out, rs
}

func renderCluster(c *model.Cluster, prev *prior.Previous, zones *zonefile.Cache, opt Options) ([]Object, diag.Results) {
	// Key material first, in the order it draws on opt.Rand (TSIG, then
	// DNSSEC): the DNSSEC keys give the DS the render writes into a parent
	// zone of the same cluster. Their objects keep their place in the output.
	keyObjs := &objectList{cluster: c.Name}
	imported, rs := keySecrets(c, prev, opt, keyObjs)
	keySets, drs := dnssecObjects(c, prev, opt, keyObjs)
	rs = append(rs, drs...)

	zs := buildZones(c, prev, zones, childDS(c, keySets))
	zs.statements(c)
	shards := zs.shard(c)
	rs = append(rs, zs.rs...)

	primaryConf, prs := namedConf(c, Primary, zs.plan)
	secondaryConf, srs := namedConf(c, Secondary, zs.plan)
	rs = append(rs, prs...)
	rs = append(rs, srs...)
	agentJSON, err := json.MarshalIndent(agentConfig(c, len(shards)), "", "  ")
	if err != nil {
		rs.Errorf(c.Src, "", "cannot encode agent config: %v", err)
	}

	out := &objectList{cluster: c.Name}
	cfg := objects.ConfigMap(c, layout.ConfigMapName(c.Name), "config", map[string]string{
		layout.NamedConfPrimary:   string(primaryConf),
		layout.NamedConfSecondary: string(secondaryConf),
		layout.AgentConfig:        string(agentJSON) + "\n",
	}, nil)
	out.add("configmap", cfg.Name, cfg)
	var shardNames []string
	for i, data := range shards {
		name := layout.ZonesConfigMapName(c.Name, i)
		shardNames = append(shardNames, name)
		out.add("configmap", name, objects.ConfigMap(c, name, "zones", data, nil))
	}
	out.objs = append(out.objs, keyObjs.objs...)
	plan := objects.PodPlan{ZoneConfigMaps: shardNames, KeySecrets: imported}
	sts := objects.StatefulSet(c, plan)
	out.add("statefulset", sts.Name, sts)
	sa, role, rb := objects.AgentRBAC(c, plan)
	out.add("serviceaccount", sa.Name, sa)
	out.add("role", role.Name, role)
	out.add("rolebinding", rb.Name, rb)
	svcs := []*corev1.Service{objects.HeadlessService(c), objects.PrimaryService(c)}
	if r := c.Spec.Replication; r == nil || !r.Hidden {
		// A hidden cluster serves its secondary clusters only, through
		// its <cluster>-primary Service.
		svcs = append(svcs, objects.ServeService(c))
	}
	for _, svc := range svcs {
		out.add("service", svc.Name, svc)
	}
	pdb := objects.PodDisruptionBudget(c)
	out.add("pdb", pdb.Name, pdb)
	if np := objects.NetworkPolicy(c); np != nil {
		out.add("networkpolicy", np.Name, np)
	}
	rs = append(rs, monitoringObjects(c, out)...)
	tlsObjects(c, out)
	return out.objs, rs
}

// objectList collects a cluster's objects, each with the file kpt writes it to.
type objectList struct {
	cluster string
	objs    []Object
}

func (l *objectList) add(kind, name string, o any) {
	l.objs = append(l.objs, Object{Obj: o, Path: fmt.Sprintf("rendered/%s/%s_%s.yaml", l.cluster, kind, name)})
}

// keySecrets adds the Secret of every generated key (kept from the previous
// output, else new material) and the keys Secret the pods mount. It
// returns the imported key Secrets, which the pods mount one by one (they
// are managed elsewhere). With spec.secrets external every key is imported
// and no keys Secret is rendered: an info result names each Secret the pods
// expect instead. The rndc key is no Secret: the agent makes it in the pod.
func keySecrets(c *model.Cluster, prev *prior.Previous, opt Options, out *objectList) ([]string, diag.Results) {
	var rs diag.Results
	var imported []string
	keyFiles := map[string][]byte{}
	for _, k := range c.Keys {
		if k.Import {
			imported = append(imported, k.SecretName)
			if c.ExternalSecrets() {
				rs = append(rs, expectedKeySecret(c, k))
			}
			continue
		}
		material, err := prev.Material(c.Namespace, k.SecretName, k.Algorithm, opt.Rand)
		if err != nil {
			rs.Errorf(k.Src, "", "cannot make key material for %q: %v", k.KeyName, err)
			continue
		}
		s := objects.TSIGSecret(c, k, material)
		out.add("secret", s.Name, s)
		keyFiles[k.SecretName+".conf"] = s.Data[layout.KeyConfFile]
	}
	sort.Strings(imported)
	if !c.ExternalSecrets() {
		ks := objects.KeysSecret(c, keyFiles)
		out.add("secret", ks.Name, ks)
	}
	return imported, rs
}

// expectedKeySecret is the info result that names the Secret an imported
// key's pods mount, with its data keys: located at the BindTSIGKey's
// spec.secretName, or for the cluster's own transfer key at its
// spec.secrets.
func expectedKeySecret(c *model.Cluster, k *model.Key) diag.Result {
	src, field, what := k.Src, "spec.secretName", fmt.Sprintf("TSIG key %q", k.KeyName)
	if k.Internal {
		src, field, what = c.Src, "spec.secrets", fmt.Sprintf("transfer key %q (every secondary presents it, every zone's allow-transfer trusts it, it signs NOTIFYs)", k.KeyName)
	}
	alg := strings.ToLower(k.Algorithm)
	size := 32
	if a, ok := vocab.TSIGByName(alg); ok {
		size = a.Size
	}
	return diag.Result{Severity: diag.Info, Source: src, Field: field, Message: fmt.Sprintf(
		"spec.secrets of BindCluster %q is external: the pods wait for Secret %q in namespace %q, made elsewhere, with the %s: data key %q = the key material in base64 (%d random bytes for %s: openssl rand -base64 %d), optional %q = %s, optional %q = %s (docs/security.md)",
		c.Name, k.SecretName, c.Namespace, what, objects.SecretKeySecret, size, alg, size, objects.SecretKeyAlgorithm, alg, objects.SecretKeyKeyName, k.KeyName)}
}
