package render

import (
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// updateKeyTransfer is the primary's allow-transfer element for a dynamic
// zone's update key: RFC 2136 clients (external-dns) list the zone by a
// TSIG-signed AXFR with the key they update with. Off with
// spec.updateKeyTransfer: false; nothing when it is the transfer key.
func updateKeyTransfer(v *model.View, z *model.Zone) []nc.Stmt {
	if !z.UpdateKeyTransfers() || z.UpdateKey.KeyName == v.TransferKey.KeyName {
		return nil
	}
	return []nc.Stmt{nc.S(nc.Kw("key"), nc.Str(z.UpdateKey.KeyName))}
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
