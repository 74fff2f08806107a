// Package prior is one run's state from the previous output: key material
// and zone serials kept in the Secrets and ConfigMaps bind-fn rendered
// before (kpt hands them back in the package, Crossplane as observed
// composed resources), and the key material this run makes, so that every
// cluster sharing a key renders the same secret. Validation reads it (a
// serial that would go backwards), the renderer reads and extends it; it
// sits below both and imports neither.
package prior

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/output"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// Previous is what the function keeps from its previous output. The zero
// value is a first render (nothing kept).
type Previous struct {
	secrets map[string]map[string][]byte // ns/name -> data
	// configMaps are the previous ConfigMaps' data (zones shards) by
	// ns/name, legacy the zone-state annotation of releases before the
	// per-zone state, by ns/<cluster>-config.
	configMaps map[string]output.ConfigMap
	legacy     map[string]string
	// zones are the zone states read from configMaps (output.Shards.Zones),
	// by ns/cluster, then by file name; zoneResults what reading them said.
	mu          sync.Mutex
	zones       map[string]map[string]output.Zone
	zoneResults diag.Results
	// generated is this run's new key material by namespace/Secret name.
	generated map[string][]byte
	dnssec    map[string]DNSKEYRecord      // ns/DS ConfigMap -> DNSKEYs at the last render
	rolls     map[string]dnssec.RollRecord // ns/DS ConfigMap -> rollovers at the last render
}

// Object is a previously rendered object, as the adapters see it.
type Object struct {
	Src         diag.Source
	Kind        string
	Annotations map[string]string
	// Data of a Secret (decoded) or ConfigMap. The adapters pass the data
	// of the zones ConfigMaps (the zones' state is their files) and
	// Secrets; the other ConfigMaps need only their annotations.
	Data map[string][]byte
}

// Read records every previously rendered object and reads the zones'
// state from them, with the one failure rule of output.Shards.Zones: a
// zone file or tombstone that does not read is an error, located at its
// ConfigMap key.
func Read(objs []Object) (*Previous, diag.Results) {
	p := &Previous{}
	for _, o := range objs {
		p.Add(o)
	}
	p.readZones()
	return p, p.zoneResults
}

// DNSKEYRecord is what the DS ConfigMap's annotation
// (layout.DNSSECKeysAnnotation) records: every signed zone's DNSKEYs
// ("<alg>/<flags>/<tag>"), sorted, by zone.
type DNSKEYRecord map[string][]string

// Add records a previously rendered object. The zones' state is read
// from all of them together, when first asked for (Read reports what that
// reading found).
func (p *Previous) Add(o Object) {
	key := o.Src.Ref.Namespace + "/" + o.Src.Ref.Name
	switch o.Kind {
	case "Secret":
		if p.secrets == nil {
			p.secrets = map[string]map[string][]byte{}
		}
		p.secrets[key] = o.Data
	case "ConfigMap":
		if raw, ok := o.Annotations[layout.DNSSECRolloversAnnotation]; ok {
			rolls := dnssec.RollRecord{}
			if json.Unmarshal([]byte(raw), &rolls) == nil {
				if p.rolls == nil {
					p.rolls = map[string]dnssec.RollRecord{}
				}
				p.rolls[key] = rolls
			}
		}
		if raw, ok := o.Annotations[layout.DNSSECKeysAnnotation]; ok {
			rec := DNSKEYRecord{}
			if json.Unmarshal([]byte(raw), &rec) != nil {
				return // unreadable: nothing to compare against, as after a first render
			}
			if p.dnssec == nil {
				p.dnssec = map[string]DNSKEYRecord{}
			}
			p.dnssec[key] = rec
			return
		}
		if raw, ok := o.Annotations[layout.ZoneStateAnnotation]; ok && strings.HasSuffix(o.Src.Ref.Name, "-config") {
			if p.legacy == nil {
				p.legacy = map[string]string{}
			}
			p.legacy[key] = raw
		}
		if len(o.Data) > 0 {
			if p.configMaps == nil {
				p.configMaps = map[string]output.ConfigMap{}
			}
			p.configMaps[key] = output.ConfigMap{Src: o.Src, Data: o.Data}
		}
		p.zones = nil // read again with this one
	}
}

// readZones reads every cluster's zone state from the zones ConfigMaps
// (once; Add resets it).
func (p *Previous) readZones() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.zones != nil {
		return
	}
	cms := make([]output.ConfigMap, 0, len(p.configMaps))
	for _, k := range slices.Sorted(maps.Keys(p.configMaps)) {
		cms = append(cms, p.configMaps[k])
	}
	p.zones, p.zoneResults = output.Read(cms)
}

// ZoneStates are the zone states the previous render of cluster c left in
// its output, by zone file name (model.ZoneFileName), removed zones'
// included. A release before the per-zone state kept them in one
// annotation; from there only the removed zones' are taken (the others are
// in their files).
func (p *Previous) ZoneStates(c *model.Cluster) map[string]output.Zone {
	if p == nil {
		return nil
	}
	p.readZones()
	p.mu.Lock() // the legacy states are merged in once, maybe from several goroutines
	defer p.mu.Unlock()
	id := c.Namespace + "/" + c.Name
	zs := p.zones[id]
	if raw, ok := p.legacy[c.Namespace+"/"+layout.ConfigMapName(c.Name)]; ok {
		var views []string
		if c.HasViews {
			for _, v := range c.Views {
				views = append(views, v.Name)
			}
		}
		for file, z := range output.Legacy(raw, views) {
			if _, ok := zs[file]; !ok {
				if zs == nil {
					zs = map[string]output.Zone{}
					p.zones[id] = zs
				}
				zs[file] = z
			}
		}
	}
	return zs
}

// ZoneState returns the serial and content hash a previous render left for
// primary zone (canonical, with the trailing dot) of view ("" without
// views) of cluster c, and whether there was one.
func (p *Previous) ZoneState(c *model.Cluster, view, zone string) (zonefile.State, bool) {
	z, ok := p.ZoneStates(c)[model.ZoneFileName("db", view, zone)]
	return z.State, ok
}

// Secret is the data of a previously rendered Secret, nil when there was none.
func (p *Previous) Secret(ns, name string) map[string][]byte {
	if p == nil {
		return nil
	}
	return p.secrets[ns+"/"+name]
}

// DNSKEYs is what a previous DS ConfigMap recorded, nil when there was none.
func (p *Previous) DNSKEYs(ns, name string) DNSKEYRecord {
	if p == nil {
		return nil
	}
	return p.dnssec[ns+"/"+name]
}

// Rollovers is what a previous DS ConfigMap recorded of the signed zones'
// key rollovers, nil when there was none.
func (p *Previous) Rollovers(ns, name string) dnssec.RollRecord {
	if p == nil {
		return nil
	}
	return p.rolls[ns+"/"+name]
}

// secretMaterial returns the key material of a previously rendered Secret:
// its `secret` key, or the secret inside its key statement (rndc.key).
func (p *Previous) secretMaterial(ns, name string) []byte {
	d := p.Secret(ns, name)
	if d == nil {
		return nil
	}
	text := string(d["secret"])
	if text == "" {
		// The one named.conf lexer reads the key statement.
		if keys, err := nc.ParseKeys(string(d[layout.RNDCKeyFile])); err == nil && len(keys) > 0 {
			text = keys[0].Secret
		}
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(raw) == 0 {
		return nil
	}
	return raw
}

// Material returns the key material kept in a previous Secret, or the
// material this run already made for it, or new material from r, which it
// remembers for the rest of the run: a BindTSIGKey without clusterRef is in
// every cluster of its namespace, and each cluster's keys Secret must carry
// the one secret its Secret holds, from the first render on (not only once
// the previous output is read back).
func (p *Previous) Material(ns, name, alg string, r io.Reader) ([]byte, error) {
	if b := p.secretMaterial(ns, name); b != nil {
		return b, nil
	}
	if b := p.generated[ns+"/"+name]; b != nil {
		return b, nil
	}
	if r == nil {
		return nil, fmt.Errorf("no previous Secret %q and no random source", name)
	}
	b, err := newKeyMaterial(r, alg)
	if err == nil {
		if p.generated == nil {
			p.generated = map[string][]byte{}
		}
		p.generated[ns+"/"+name] = b
	}
	return b, err
}

// SecretData reads a previously rendered Secret's content from its JSON:
// `data` (base64) with `stringData` merged over it, as the API server would.
func SecretData(js []byte) (map[string][]byte, error) {
	var s struct {
		Data       map[string][]byte `json:"data"`
		StringData map[string]string `json:"stringData"`
	}
	if err := json.Unmarshal(js, &s); err != nil {
		return nil, err
	}
	for k, v := range s.StringData {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[k] = []byte(v)
	}
	return s.Data, nil
}

// ConfigMapData reads a previously rendered ConfigMap's data from its JSON
// (zone files: the zones' state).
func ConfigMapData(js []byte) (map[string][]byte, error) {
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(js, &cm); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(cm.Data))
	for k, v := range cm.Data {
		out[k] = []byte(v)
	}
	return out, nil
}

// newKeyMaterial reads fresh key material for algorithm from r (as long as
// its digest, as tsig-keygen makes them): crypto/rand's
// Reader in production, a fixed reader in tests.
func newKeyMaterial(r io.Reader, algorithm string) ([]byte, error) {
	a, ok := vocab.TSIGByName(algorithm)
	if !ok {
		return nil, fmt.Errorf("cannot generate TSIG key material: unknown algorithm %q (want one of %s)", algorithm, strings.Join(vocab.TSIGNames(), ", "))
	}
	b := make([]byte, a.Size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("cannot generate TSIG key material: %w", err)
	}
	return b, nil
}

// ObjectOf is a rendered object (a typed *corev1.Secret or
// *corev1.ConfigMap) as the previous output the adapters hand over: what a
// render reads back when its output is fed to the next one. Other kinds
// give false.
func ObjectOf(obj any) (Object, bool) {
	var o Object
	switch v := obj.(type) {
	case *corev1.Secret:
		o = Object{Kind: "Secret", Annotations: v.Annotations, Data: v.Data}
		o.Src.Ref = diag.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: v.Namespace, Name: v.Name}
	case *corev1.ConfigMap:
		o = Object{Kind: "ConfigMap", Annotations: v.Annotations}
		o.Src.Ref = diag.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: v.Namespace, Name: v.Name}
		if len(v.Data) > 0 {
			o.Data = make(map[string][]byte, len(v.Data))
			for k, s := range v.Data {
				o.Data[k] = []byte(s)
			}
		}
	default:
		return Object{}, false
	}
	return o, true
}
