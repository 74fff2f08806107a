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

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// ZoneStateAnnotation on the <cluster>-config ConfigMap carries each zone's
// serial and content hash, so the next render can bump serials exactly when
// content changes.
const ZoneStateAnnotation = "bind.unkin.net/zone-state"

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

// Render renders every cluster. On any error the objects must not be used.
func Render(clusters []*model.Cluster, prev *Previous, opt Options) ([]Object, diag.Results) {
	if prev == nil {
		prev = &Previous{}
	}
	var out []Object
	var rs diag.Results
	seen := map[string]bool{}
	for _, c := range clusters {
		rs = append(rs, objects.Validate(c)...)
		objs, crs := renderCluster(c, prev, opt)
		rs = append(rs, crs...)
		for _, o := range objs {
			// A key shared by the namespace's clusters (no clusterRef) is
			// one Secret, rendered with the first cluster that uses it.
			if s, ok := o.Obj.(*corev1.Secret); ok {
				id := s.Namespace + "/" + s.Name
				if seen[id] {
					continue
				}
				seen[id] = true
			}
			out = append(out, o)
		}
	}
	return out, rs
}

type zoneFile struct {
	name string // ConfigMap key / file name
	text []byte
}

func renderCluster(c *model.Cluster, prev *Previous, opt Options) ([]Object, diag.Results) {
	var rs diag.Results
	plan := &confPlan{files: map[zoneKey]string{}, catalogs: map[string]string{}, policies: map[zoneKey]string{}}
	state := map[string]zonefile.State{}
	prevState := prev.zoneState(c)
	var files []zoneFile
	// where a file is referenced from, filled once shards are known
	type ref struct {
		set  func(path string)
		name string
	}
	var refs []ref
	var seeds []layout.SeedZone
	writable := map[string]diag.Source{} // zone files seeded from one file: never split
	var dyn []layout.DynamicZone

	addZone := func(key string, src diag.Source, z *zonefile.Zone, explicit *uint32, name string, set func(string)) {
		var p *zonefile.State
		if s, ok := prevState[key]; ok {
			p = &s
		}
		serial := zonefile.NextSerial(p, z.Hash, explicit)
		if p != nil && explicit == nil && serial < p.Serial && p.Serial-serial < 1<<31 {
			rs.Errorf(src, "spec.soa.serial", "serial would go backwards from %d", p.Serial)
		}
		state[key] = zonefile.State{Serial: serial, Hash: z.Hash}
		files = append(files, zoneFile{name: name, text: z.Text(serial)})
		refs = append(refs, ref{set: set, name: name})
	}

	for _, v := range c.Views {
		v := v
		if v.Catalog != nil {
			cz, zrs := zonefile.ViewCatalog(v)
			rs = append(rs, zrs...)
			if cz != nil {
				addZone(stateKey(v.Name, v.Catalog.ZoneName), v.Catalog.Src, cz, nil, fileName("catalog", v.Name, v.Catalog.ZoneName),
					func(p string) { plan.catalogs[v.Name] = p })
			}
		}
		for _, z := range v.Zones {
			z := z
			if z.Spec.Type != v1alpha1.ZonePrimary {
				continue
			}
			built, zrs := prev.BuildZone(z)
			rs = append(rs, zrs...)
			if built == nil {
				continue
			}
			var explicit *uint32
			if z.Spec.SOA != nil {
				explicit = z.Spec.SOA.Serial
			}
			name := fileName("db", v.Name, z.Name)
			k := zoneKey{v.Name, z.Name}
			if z.Writable() {
				dest := layout.DataDir + "/" + primaryDir + "/" + name
				writable[name] = z.Src
				plan.files[k] = dest
				addZone(stateKey(v.Name, z.Name), z.Src, built, explicit, name, func(p string) {
					seeds = append(seeds, layout.SeedZone{Zone: bare(z.Name), View: v.Name, Source: p, Dest: dest})
				})
			} else {
				addZone(stateKey(v.Name, z.Name), z.Src, built, explicit, name, func(p string) { plan.files[k] = p })
			}
			if z.Spec.DynamicUpdate && z.UpdateKey != nil {
				var recs []string
				for _, rr := range built.RRs {
					// The apex NS belongs to BindZone.spec.nameservers and is
					// in the seed; the agent refuses to converge it.
					if h := rr.Header(); h.Rrtype == dns.TypeNS && dns.CanonicalName(h.Name) == dns.CanonicalName(z.Name) {
						continue
					}
					recs = append(recs, rr.String())
				}
				sort.Strings(recs)
				dyn = append(dyn, layout.DynamicZone{Zone: bare(z.Name), View: v.Name, KeyName: z.UpdateKey.KeyName, KeyFile: keyInclude(c, z.UpdateKey), Records: recs})
			}
			prev.forgetZone(z) // its text is made: let the RRs go
		}
		for _, p := range v.Policies {
			p := p
			pz, zrs := zonefile.Policy(p)
			rs = append(rs, zrs...)
			if pz == nil {
				continue
			}
			k := zoneKey{v.Name, p.ZoneName}
			addZone(stateKey(v.Name, p.ZoneName), p.Src, pz, nil, fileName("rpz", v.Name, p.ZoneName), func(path string) { plan.policies[k] = path })
		}
	}

	// Shard the zone files, in name order, into ConfigMaps under the budget.
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].name < refs[j].name })
	shards, where, oversized := shardFiles(files, ShardBudget, func(name string) bool { _, ok := writable[name]; return ok })
	for _, name := range oversized {
		rs.Errorf(writable[name], "spec.records", "zone file %q is larger than one ConfigMap can carry (%d bytes), and a dynamic or signed zone is seeded into the data volume from a single file, so it cannot be split: move static records to a separate zone, or add them by dynamic update instead of spec.records/DNSRecords", name, ShardBudget)
	}
	for _, r := range refs {
		r.set(layout.ZoneFile(where[r.name], r.name))
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i].Dest < seeds[j].Dest })

	primaryConf, prs := namedConf(c, Primary, plan)
	secondaryConf, srs := namedConf(c, Secondary, plan)
	rs = append(rs, prs...)
	rs = append(rs, srs...)

	agent := agentConfig(c, seeds, dyn)
	agentJSON, err := json.MarshalIndent(agent, "", "  ")
	if err != nil {
		rs.Errorf(c.Src, "", "cannot encode agent config: %v", err)
	}
	stateJSON, err := json.Marshal(state)
	if err != nil {
		rs.Errorf(c.Src, "", "cannot encode zone state: %v", err)
	}

	var out []Object
	add := func(kind, name string, o any) {
		out = append(out, Object{Obj: o, Path: fmt.Sprintf("rendered/%s/%s_%s.yaml", c.Name, kind, name)})
	}
	cfg := objects.ConfigMap(c, layout.ConfigMapName(c.Name), "config", map[string]string{
		layout.NamedConfPrimary:   string(primaryConf),
		layout.NamedConfSecondary: string(secondaryConf),
		layout.AgentConfig:        string(agentJSON) + "\n",
	}, map[string]string{ZoneStateAnnotation: string(stateJSON)})
	add("configmap", cfg.Name, cfg)
	var shardNames []string
	for i, data := range shards {
		name := layout.ZonesConfigMapName(c.Name, i)
		shardNames = append(shardNames, name)
		cm := objects.ConfigMap(c, name, "zones", data, nil)
		add("configmap", name, cm)
	}

	// Imported key Secrets are mounted one by one (they are managed
	// elsewhere); every generated key is a file of the one keys Secret.
	var importedSecrets []string
	keyFiles := map[string][]byte{}
	for _, k := range c.Keys {
		if k.Import {
			importedSecrets = append(importedSecrets, k.SecretName)
			continue
		}
		material, err := prev.material(c.Namespace, k.SecretName, k.Algorithm, opt.Rand)
		if err != nil {
			rs.Errorf(k.Src, "", "cannot make key material for %q: %v", k.KeyName, err)
			continue
		}
		s := objects.TSIGSecret(c, k, material)
		add("secret", s.Name, s)
		keyFiles[k.SecretName+".conf"] = s.Data[layout.KeyConfFile]
	}
	sort.Strings(importedSecrets)
	ks := objects.KeysSecret(c, keyFiles)
	add("secret", ks.Name, ks)
	rndc, err := prev.material(c.Namespace, layout.RNDCSecretName(c.Name), objects.RNDCAlgorithm, opt.Rand)
	if err != nil {
		rs.Errorf(c.Src, "", "cannot make the rndc key: %v", err)
	} else {
		s := objects.RNDCSecret(c, rndc)
		add("secret", s.Name, s)
	}

	sts := objects.StatefulSet(c, objects.PodPlan{ZoneConfigMaps: shardNames, KeySecrets: importedSecrets})
	add("statefulset", sts.Name, sts)
	for _, svc := range []*corev1.Service{objects.HeadlessService(c), objects.PrimaryService(c), objects.ServeService(c)} {
		add("service", svc.Name, svc)
	}
	pdb := objects.PodDisruptionBudget(c)
	add("pdb", pdb.Name, pdb)
	return out, rs
}

func stateKey(view, zone string) string {
	if view == "" {
		return bare(zone)
	}
	return view + "/" + bare(zone)
}

// material returns the key material kept in a previous Secret, or new
// material from r.
func (p *Previous) material(ns, name, alg string, r io.Reader) ([]byte, error) {
	if b := p.secretMaterial(ns, name); b != nil {
		return b, nil
	}
	if r == nil {
		return nil, fmt.Errorf("no previous Secret %q and no random source", name)
	}
	return objects.NewKeyMaterial(r, alg)
}
