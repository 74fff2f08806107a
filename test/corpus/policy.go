package corpus

import (
	"fmt"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// Policies is the dnssec-policy part of a checkconf file.
type Policies struct {
	// Conf is what BIND is asked about: the file's dnssec-policy
	// statements, as namedconf reads them, and one primary zone signed by
	// each, as bind-fn renders a signed static zone (inline-signing yes).
	Conf string
	// Objects are the package: the BindCluster, the BindDNSSECPolicies
	// (converted by internal/importer) and one BindZone signed by each.
	Objects map[string][]any
	// Losses are the policy statements the API has no field for.
	Losses []string
}

// Items are the package as pipeline items.
func (p *Policies) Items() ([]model.Item, error) { return Items(p.Objects) }

// ConvertPolicies reads a checkconf file (namedconf) and converts its
// dnssec-policy statements. A file namedconf cannot read is an error.
func ConvertPolicies(file string, read func(string) ([]byte, error)) (*Policies, error) {
	conf, err := nc.ReadConf(file, "", read)
	if err != nil {
		return nil, err
	}
	var stmts []nc.Located
	var plain []nc.Stmt
	for _, s := range conf {
		if s.Name() == "dnssec-policy" {
			stmts = append(stmts, s)
			plain = append(plain, s.Plain())
		}
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("%s: no dnssec-policy statement", file)
	}
	text, err := nc.Format(plain...)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	res, err := importer.Import(stmts, importer.Options{Cluster: Cluster, Namespace: Namespace, Replicas: 1,
		Read: read, Exists: func(string) bool { return false }})
	if err != nil {
		return nil, err
	}
	p := &Policies{Objects: map[string][]any{"cluster.yaml": {ClusterObj()}}}
	for _, l := range res.Losses {
		p.Losses = append(p.Losses, l.What+" ("+l.Why+")")
	}
	var b strings.Builder
	b.Write(text)
	for i, o := range res.Objects["dnssec.yaml"] {
		pol := o.(*v1alpha1.BindDNSSECPolicy)
		p.Objects["dnssec.yaml"] = append(p.Objects["dnssec.yaml"], pol)
		name := pol.Spec.PolicyName
		if name == "" {
			name = pol.Name
		}
		zone := fmt.Sprintf("p%d.example", i)
		fmt.Fprintf(&b, "zone %q { type primary; file %q; dnssec-policy %q; inline-signing yes; };\n", zone, zone+".db", name)
		z := &v1alpha1.BindZone{TypeMeta: metaType(v1alpha1.KindBindZone), ObjectMeta: meta(fmt.Sprintf("p%d", i)),
			Spec: v1alpha1.BindZoneSpec{ClusterRef: Cluster, ZoneName: zone, Type: v1alpha1.ZonePrimary,
				Nameservers: []string{"ns1.example.net."}, DNSSECPolicyRef: pol.Name}}
		p.Objects["zones.yaml"] = append(p.Objects["zones.yaml"], z)
	}
	p.Conf = b.String()
	return p, nil
}
