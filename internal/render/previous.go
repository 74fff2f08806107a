package render

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
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// Previous is what the function keeps from its previous output: key
// material and zone serials. kpt hands the previous output back in the
// package; Crossplane passes observed composed resources. It also keeps the
// key material this run generates (remember), so that every cluster sharing
// a key renders the same secret. This run's built zones are a ZoneCache.
type Previous struct {
	secrets map[string]map[string][]byte // ns/name -> data
	zones   map[string]map[string]zonefile.State
	// generated is this run's new key material by namespace/Secret name.
	generated map[string][]byte
	dnssec    map[string]dnssecRecord // ns/cluster -> DNSKEYs at the last render (dnssec.go)
}

// PrevObject is a previously rendered object, as the adapters see it.
type PrevObject struct {
	Src         diag.Source
	Kind        string
	Annotations map[string]string
	// Data of a Secret (decoded) or ConfigMap.
	Data map[string][]byte
}

// Add records a previously rendered object. It returns a warning when the
// object carries state that cannot be read (the zone serials then restart).
func (p *Previous) Add(o PrevObject) diag.Results {
	var rs diag.Results
	key := o.Src.Ref.Namespace + "/" + o.Src.Ref.Name
	switch o.Kind {
	case "Secret":
		if p.secrets == nil {
			p.secrets = map[string]map[string][]byte{}
		}
		p.secrets[key] = o.Data
	case "ConfigMap":
		if p.addDNSSECRecord(o) {
			return nil
		}
		raw, ok := o.Annotations[ZoneStateAnnotation]
		if !ok || !strings.HasSuffix(o.Src.Ref.Name, "-config") {
			return nil
		}
		st := map[string]zonefile.State{}
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			rs.Warnf(o.Src, "metadata.annotations["+ZoneStateAnnotation+"]", "cannot read the previous zone serials (%v): serials restart unless spec.soa.serial is set", err)
			return rs
		}
		if p.zones == nil {
			p.zones = map[string]map[string]zonefile.State{}
		}
		p.zones[key] = st
	}
	return rs
}

func (p *Previous) zoneState(c *model.Cluster) map[string]zonefile.State {
	return p.zones[c.Namespace+"/"+layout.ConfigMapName(c.Name)]
}

// ZoneState returns the serial and content hash a previous render recorded
// for a zone of cluster c (view "" without views; zone canonical, with the
// trailing dot), and whether there was one.
func (p *Previous) ZoneState(c *model.Cluster, view, zone string) (zonefile.State, bool) {
	if p == nil {
		return zonefile.State{}, false
	}
	s, ok := p.zoneState(c)[stateKey(view, zone)]
	return s, ok
}

// secretMaterial returns the key material of a previously rendered Secret:
// its `secret` key, or the secret inside its key statement (rndc.key).
func (p *Previous) secretMaterial(ns, name string) []byte {
	d := p.secrets[ns+"/"+name]
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

// material returns the key material kept in a previous Secret, or new
// material from r.
func (p *Previous) material(ns, name, alg string, r io.Reader) ([]byte, error) {
	if b := p.secretMaterial(ns, name); b != nil {
		return b, nil
	}
	if b := p.generated[ns+"/"+name]; b != nil {
		return b, nil
	}
	if r == nil {
		return nil, fmt.Errorf("no previous Secret %q and no random source", name)
	}
	b, err := objects.NewKeyMaterial(r, alg)
	if err == nil {
		p.remember(ns, name, b)
	}
	return b, err
}

// remember keeps new key material for the rest of the run: a BindTSIGKey
// without clusterRef is in every cluster of its namespace, and each cluster's
// keys Secret must carry the one secret its Secret holds, from the first
// render on (not only once the previous output is read back).
func (p *Previous) remember(ns, name string, material []byte) {
	if p.generated == nil {
		p.generated = map[string][]byte{}
	}
	p.generated[ns+"/"+name] = material
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
