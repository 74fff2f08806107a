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
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// Previous is what the function keeps from its previous output. The zero
// value is a first render (nothing kept).
type Previous struct {
	secrets map[string]map[string][]byte // ns/name -> data
	zones   map[string]map[string]zonefile.State
	// generated is this run's new key material by namespace/Secret name.
	generated map[string][]byte
	dnssec    map[string]DNSKEYRecord // ns/DS ConfigMap -> DNSKEYs at the last render
}

// Object is a previously rendered object, as the adapters see it.
type Object struct {
	Src         diag.Source
	Kind        string
	Annotations map[string]string
	// Data of a Secret (decoded) or ConfigMap.
	Data map[string][]byte
}

// DNSKEYRecord is what the DS ConfigMap's annotation
// (layout.DNSSECKeysAnnotation) records: every signed zone's DNSKEYs
// ("<alg>/<flags>/<tag>"), sorted, by zone.
type DNSKEYRecord map[string][]string

// Add records a previously rendered object. It returns a warning when the
// object carries state that cannot be read (the zone serials then restart).
func (p *Previous) Add(o Object) diag.Results {
	var rs diag.Results
	key := o.Src.Ref.Namespace + "/" + o.Src.Ref.Name
	switch o.Kind {
	case "Secret":
		if p.secrets == nil {
			p.secrets = map[string]map[string][]byte{}
		}
		p.secrets[key] = o.Data
	case "ConfigMap":
		if raw, ok := o.Annotations[layout.DNSSECKeysAnnotation]; ok {
			rec := DNSKEYRecord{}
			if json.Unmarshal([]byte(raw), &rec) != nil {
				return nil // unreadable: nothing to compare against, as after a first render
			}
			if p.dnssec == nil {
				p.dnssec = map[string]DNSKEYRecord{}
			}
			p.dnssec[key] = rec
			return nil
		}
		raw, ok := o.Annotations[layout.ZoneStateAnnotation]
		if !ok || !strings.HasSuffix(o.Src.Ref.Name, "-config") {
			return nil
		}
		st := map[string]zonefile.State{}
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			rs.Warnf(o.Src, "metadata.annotations["+layout.ZoneStateAnnotation+"]", "cannot read the previous zone serials (%v): serials restart unless spec.soa.serial is set", err)
			return rs
		}
		if p.zones == nil {
			p.zones = map[string]map[string]zonefile.State{}
		}
		p.zones[key] = st
	}
	return rs
}

// ZoneStates are the serials and content hashes the previous render of
// cluster c recorded, by layout.ZoneStateKey.
func (p *Previous) ZoneStates(c *model.Cluster) map[string]zonefile.State {
	if p == nil {
		return nil
	}
	return p.zones[c.Namespace+"/"+layout.ConfigMapName(c.Name)]
}

// ZoneState returns the serial and content hash a previous render recorded
// for a zone of cluster c (view "" without views; zone canonical, with the
// trailing dot), and whether there was one.
func (p *Previous) ZoneState(c *model.Cluster, view, zone string) (zonefile.State, bool) {
	s, ok := p.ZoneStates(c)[layout.ZoneStateKey(view, zone)]
	return s, ok
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
