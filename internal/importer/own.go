package importer

import (
	"path/filepath"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// A configuration bind-fn rendered (it includes the agent's server lists)
// holds statements bind-fn adds itself: its intra-cluster transfer keys,
// the rndc key, the agent's server lists and peer ACL, the transfer key and
// the exclusions at the head of each view's match-clients, and each zone's
// keyed transfers and NOTIFYs to the cluster's own pods. Importing such a
// configuration (import(render(x))) leaves them to the next render.

// isBindFnRender says whether conf came from bind-fn.
func isBindFnRender(conf []namedconf.Located) bool {
	for _, s := range conf {
		// ReadConf expands includes: the agent's servers.conf shows as its
		// statements' file.
		if s.File == layout.RunFile(layout.ServersInclude) {
			return true
		}
	}
	return false
}

// ownKey says whether a key statement is one bind-fn generates for its own
// use: the rndc key, or an intra-cluster transfer key (its include is
// <cluster>-keys/<cluster>[-<view>]-xfr-tsig.conf).
func (im *importer) ownKey(s namedconf.Located) bool {
	if !im.bindfn {
		return false
	}
	if s.Arg(1) == layout.RNDCKeyName || filepath.Dir(s.File) == layout.RNDCDir {
		return true
	}
	base := filepath.Base(s.File)
	return filepath.Base(filepath.Dir(s.File)) == layout.KeysSecretName(im.opt.Cluster) &&
		strings.HasPrefix(base, im.opt.Cluster+"-") && strings.HasSuffix(base, "-xfr-tsig.conf")
}

// ownList says whether a list or ACL name is the agent's.
func (im *importer) ownList(name string) bool {
	return im.bindfn && (name == layout.PeersACL || strings.HasPrefix(name, "bind-fn-"))
}

// withoutOwn drops the elements bind-fn adds to an address match list:
// the agent's lists and ACL, and key elements of keys in drop.
func (im *importer) withoutOwn(els []string, drop map[string]bool) []string {
	if !im.bindfn {
		return els
	}
	var out []string
	for _, e := range els {
		n := strings.Trim(e, `"`)
		if im.ownList(n) {
			continue
		}
		if k, ok := strings.CutPrefix(n, "key "); ok && drop[strings.Trim(k, `"`)] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// viewHead splits a bind-fn view's match-clients: the head bind-fn writes
// (its transfer key first, then keys of the view's zones and exclusions
// of other views' keys) and the user's list after it. The transfer key
// is returned.
func viewHead(els []string) (transfer string, rest []string) {
	i := 0
	for ; i < len(els); i++ {
		e := els[i]
		if !strings.HasPrefix(e, "key ") && !strings.HasPrefix(e, "!key ") {
			break
		}
		if i == 0 && strings.HasPrefix(e, "key ") {
			transfer = strings.Trim(strings.TrimPrefix(e, "key "), `"`)
		}
	}
	return transfer, els[i:]
}
