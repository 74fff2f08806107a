package render

import (
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/objects"
)

// tlsBlocks are the top-level tls and http statements of spec.tls
// (docs/tls.md): the server's certificate and key from the mounted
// Secret (cert-manager's file names), the DoH endpoint, and on a pod
// that transfers over TLS in strict mode the client block that verifies
// its primary (ca.crt and the name the certificate must hold).
func (b *confBuilder) tlsBlocks() []nc.Stmt {
	t := b.c.TLS
	if t == nil {
		return nil
	}
	out := []nc.Stmt{nc.TLSBlock{
		Name:     layout.TLSServerName,
		CertFile: layout.TLSFile(layout.TLSCertFile),
		KeyFile:  layout.TLSFile(layout.TLSKeyFile),
	}.Stmt()}
	if t.DoHPort != 0 {
		out = append(out, nc.HTTPBlock{Name: layout.DoHName, Endpoints: []string{t.DoHPath}}.Stmt())
	}
	// Both roles define the client blocks: servers.conf holds every list
	// on every pod (a list of the other role empty).
	client := func(name string, x *model.TransferTLS) {
		if x != nil && x.Strict {
			out = append(out, nc.TLSBlock{
				Name:           name,
				CAFile:         layout.TLSFile(layout.TLSCAFile),
				RemoteHostname: x.RemoteHostname,
			}.Stmt())
		}
	}
	client(layout.TLSClientName, t.Transfers)
	if up := b.c.Upstream; up != nil {
		client(layout.TLSUpstreamName, up.TransferTLS)
	}
	return out
}

// tlsClientName is the tls name a transfer client's server entries carry:
// strict's block, or BIND's ephemeral (opportunistic).
func tlsClientName(strictName string, x *model.TransferTLS) string {
	if x.Strict {
		return strictName
	}
	return nc.TLSEphemeral
}

// tlsListeners are the DoT and DoH listen-on statements (and their v6
// twins with spec.ipv6), beside the plain listen-on of port 53. BIND has
// no listen-on in a view: every view is reached over every listener.
func (b *confBuilder) tlsListeners() []nc.Stmt {
	t := b.c.TLS
	if t == nil {
		return nil
	}
	all := []nc.Stmt{nc.S(nc.Kw("any"))}
	var ls []nc.Listener
	if t.DoTPort != 0 {
		ls = append(ls, nc.Listener{Port: t.DoTPort, TLS: layout.TLSServerName, Match: all})
	}
	if t.DoHPort != 0 {
		ls = append(ls, nc.Listener{Port: t.DoHPort, TLS: layout.TLSServerName, HTTP: layout.DoHName, Match: all})
	}
	var out []nc.Stmt
	for _, l := range ls {
		out = append(out, l.Stmt())
	}
	if b.c.Spec.IPv6 {
		for _, l := range ls {
			l.V6 = true
			out = append(out, l.Stmt())
		}
	}
	return out
}

// tlsAgentConfig tells the agent what to check in the TLS mount, and puts
// the TLS client name on the server lists a pod transfers from.
func tlsAgentConfig(c *model.Cluster, doc *layout.AgentConfigDoc) {
	t := c.TLS
	if t == nil {
		return
	}
	strict := t.Transfers != nil && t.Transfers.Strict || c.Upstream != nil && c.Upstream.TransferTLS != nil && c.Upstream.TransferTLS.Strict
	doc.TLS = &layout.TLSCheck{Secret: t.SecretName, RequireCA: strict}
	for i := range doc.ServerLists {
		l := &doc.ServerLists[i]
		var x *model.TransferTLS
		name, port := layout.TLSClientName, t.DoTPort
		switch {
		case l.Role == "secondary" && !l.ACLOnly && isPrimaryList(c, l.Name):
			x = t.Transfers
		case l.Name == layout.UpstreamListName && c.Upstream != nil:
			x, name, port = c.Upstream.TransferTLS, layout.TLSUpstreamName, c.Upstream.Primary.TLS.DoTPort
		}
		if x == nil {
			continue
		}
		l.TLS = tlsClientName(name, x)
		if l.Port == 0 {
			l.Port = port
		}
	}
}

func isPrimaryList(c *model.Cluster, name string) bool {
	for _, v := range c.Views {
		if name == layout.PrimaryListName(v.Name) {
			return true
		}
	}
	return false
}

// tlsObjects adds the cert-manager Certificate of spec.tls.certificate.
func tlsObjects(c *model.Cluster, out *objectList) {
	if cert := objects.CertificateFor(c); cert != nil {
		out.add("certificate", cert.Name, cert)
	}
}
