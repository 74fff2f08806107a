package importer

import (
	"strconv"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// ownedOptions are options bind-fn sets itself: paths inside the pod,
// listeners, replication (keyed transfers and NOTIFY between the pods).
var ownedOptions = map[string]string{
	"directory": "pod path", "pid-file": "pod path", "session-keyfile": "pod path", "lock-file": "pod path",
	"dump-file": "pod path", "statistics-file": "pod path", "memstatistics-file": "pod path",
	"managed-keys-directory": "pod path", "key-directory": "pod path", "bindkeys-file": "pod path",
	"listen-on": "the pods listen on every address", "version": "bind-fn answers \"not disclosed\"",
	"notify": "bind-fn sends keyed NOTIFYs to its own secondaries", "allow-notify": "bind-fn admits NOTIFY by the cluster's transfer key",
	"notify-rate": "bind-fn tunes NOTIFY rates", "startup-notify-rate": "bind-fn tunes NOTIFY rates", "serial-query-rate": "bind-fn tunes NOTIFY rates", "notify-delay": "bind-fn tunes NOTIFY rates",
	"transfers-in": "bind-fn tunes transfer concurrency", "transfers-per-ns": "bind-fn tunes transfer concurrency", "transfers-out": "bind-fn tunes transfer concurrency",
	"tcp-clients":     "bind-fn tunes transfer concurrency (its transfers are TCP clients)",
	"allow-new-zones": "the agent adds zones by rndc addzone", "new-zones-directory": "the agent adds zones by rndc addzone",
	"allow-update": "set per zone (dynamicUpdate + updateKeyRef)", "allow-transfer": "bind-fn allows transfers by key; set BindZone.allowTransfer per zone",
}

// options maps the options block; it returns whether recursion is on.
func (im *importer) options(o namedconf.Located) bool {
	sp := &im.cluster.Spec
	recursion := true
	for _, s := range o.Body {
		name := s.Name()
		if why, ok := ownedOptions[name]; ok {
			if name == "directory" && im.zoneDir == "" {
				im.zoneDir = s.Arg(1)
			}
			if name == "key-directory" {
				im.keyDir = s.Arg(1)
			}
			if name == "notify" {
				im.optNotify = s // carried per zone (notify)
				continue
			}
			if name == "allow-transfer" || name == "allow-update" {
				// These change who may transfer or update: carried per zone
				// where the zone says so, otherwise a loss.
				if els, ok := elements(s.Body); ok && len(els) == 1 && (els[0] == "none") {
					im.replaced(s, "bind-fn's default is the same")
					continue
				}
				im.lose(s, "options-wide "+name+": "+why)
				continue
			}
			im.replaced(s, why)
			continue
		}
		switch name {
		case "recursion":
			recursion = yes(s.Arg(1))
			continue
		case "allow-query", "allow-recursion", "forwarders", "allow-query-cache":
			if els, ok := elements(s.Body); ok {
				im.optRec.set(s, els)
				if name == "allow-query" {
					sp.AllowQuery = els
				}
				if name != "allow-query-cache" {
					continue
				}
			}
		case "forward":
			im.optRec.set(s, nil)
			continue
		case "dnssec-validation":
			sp.DNSSECValidation = s.Arg(1)
			continue
		case "querylog":
			sp.QueryLogging = yes(s.Arg(1))
			continue
		case "listen-on-v6":
			if els, ok := elements(s.Body); ok {
				sp.IPv6 = !(len(els) == 1 && els[0] == "none")
				im.replaced(s, "bind-fn listens on every address; spec.ipv6 says whether IPv6 is on")
				continue
			}
		case "response-policy":
			im.responsePolicy(s, "")
			continue
		case "also-notify":
			// Every zone without its own also-notify inherits it (notify.go).
			if els, ok := elements(s.Body); ok {
				im.alsoNotify[""] = im.expand(els)
				continue
			}
		case "rate-limit":
			if im.rateLimit(s) {
				continue
			}
		}
		// Anything else goes to extraOptions, which bind-fn parses and
		// checks (Check moves what it refuses to the losses).
		if t := format(s); t != "" {
			sp.ExtraOptions = append(sp.ExtraOptions, strings.TrimSuffix(t, ";"))
			im.extraWhere = append(im.extraWhere, s)
		}
	}
	return recursion
}

func yes(s string) bool {
	switch strings.ToLower(s) {
	case "yes", "true", "1":
		return true
	}
	return false
}

func (im *importer) rateLimit(s namedconf.Located) bool {
	rl := &v1alpha1.RateLimitSpec{}
	for _, b := range s.Body {
		switch b.Name() {
		case "responses-per-second", "window", "slip":
			n, err := strconv.Atoi(b.Arg(1))
			if err != nil || len(b.Words) != 2 {
				return false
			}
			v := int32(n)
			switch b.Name() {
			case "responses-per-second":
				rl.ResponsesPerSecond = v
			case "window":
				rl.Window = v
			default:
				rl.Slip = &v
			}
		case "exempt-clients":
			els, ok := elements(b.Body)
			if !ok {
				return false
			}
			rl.Exempt = im.withoutOwn(els, nil)
		default:
			return false
		}
	}
	im.cluster.Spec.RateLimit = rl
	return true
}

// view maps a view and its zones.
func (im *importer) view(vs viewStmt, i int) {
	name := vs.name
	v := &v1alpha1.BindView{TypeMeta: tm(v1alpha1.KindBindView), ObjectMeta: im.meta(im.objName("view", name))}
	v.Spec.ClusterRef = im.opt.Cluster
	if v.Name != name {
		v.Spec.ViewName = name
	}
	v.Spec.Order = int32((i + 1) * 10)
	var rest []namedconf.Located
	for _, b := range vs.body {
		switch b.Name() {
		case "match-clients", "match-destinations":
			els, ok := elements(b.Body)
			if !ok {
				im.lose(b, "a nested address match list")
				continue
			}
			if b.Name() == "match-clients" {
				if im.bindfn {
					var key string
					key, els = viewHead(els)
					im.viewKey[name] = key
					im.replaced(b, "the head of a bind-fn view's match-clients (its transfer key, its zones' keys, other views' keys excluded): the next render writes it")
				}
				v.Spec.MatchClients = els
			} else {
				v.Spec.MatchDestinations = els
			}
		case "recursion":
			r := yes(b.Arg(1))
			v.Spec.Recursion = &r
		case "allow-recursion", "allow-query-cache", "allow-query", "forwarders", "forward":
			els, ok := elements(b.Body)
			if !ok {
				im.lose(b, "a nested address match list")
				continue
			}
			rec := im.viewRec[name]
			if rec == nil {
				rec = &recursionSettings{}
				im.viewRec[name] = rec
			}
			rec.set(b, els)
			if n := b.Name(); n == "allow-query" || n == "allow-query-cache" {
				im.lose(b, "a view's "+n+": bind-fn has allowQuery per cluster and per zone, not per view")
			}
		case "notify":
			im.viewNotify[name] = b // carried per zone (notify)
		case "also-notify":
			els, ok := elements(b.Body)
			if !ok {
				im.lose(b, "a nested address match list")
				continue
			}
			im.alsoNotify[name] = im.expand(els) // inherited by the view's zones (notify.go)
		default:
			rest = append(rest, b)
		}
	}
	im.add("views.yaml", v)
	for _, b := range rest {
		if b.Name() == "response-policy" {
			im.responsePolicy(b, name)
			continue
		}
		if im.bindfn && b.Name() == "dnssec-validation" {
			im.replaced(b, "a bind-fn view's validation: the next render writes it")
			continue
		}
		im.lose(b, "view option bind-fn has no field for")
	}
	for _, z := range vs.zones {
		im.zone(z, v)
	}
}

// responsePolicy records the policy zones of a view (or of options), in order.
func (im *importer) responsePolicy(s namedconf.Located, view string) {
	// `response-policy { zone "a"; };` is a block; with options after the
	// list (recursive-only no) the list is a word.
	lists := [][]namedconf.Stmt{s.Plain().Body}
	for _, w := range s.Words {
		if w.Kind == namedconf.List {
			lists = append(lists, w.Items)
		}
	}
	for _, items := range lists {
		for _, e := range items {
			if e.Name() == "zone" {
				im.rpz[view] = append(im.rpz[view], strings.ToLower(strings.TrimSuffix(e.Arg(1), ".")))
				if len(e.Words) > 2 {
					im.lose(namedconf.Located{Stmt: e, File: s.File}, "per-zone response-policy options (bind-fn renders its policies with defaults)")
				}
			}
		}
	}
	im.replaced(s, "bind-fn renders response-policy from the view's BindPolicies (recursive-only no on authoritative clusters)")
}

func (im *importer) dnssecPolicy(s namedconf.Located) {
	name := s.Arg(1)
	p := &v1alpha1.BindDNSSECPolicy{TypeMeta: tm(v1alpha1.KindBindDNSSECPolicy), ObjectMeta: im.meta(im.objName("dnssec", name))}
	p.Spec.ClusterRef = im.opt.Cluster
	if p.Name != name {
		p.Spec.PolicyName = name
	}
	durations := map[string]*string{}
	for _, d := range vocab.PolicyDurations {
		durations[d.Keyword] = model.PolicyDurationField(&p.Spec, d)
	}
	for _, b := range s.Body {
		if d, ok := durations[b.Name()]; ok && len(b.Words) == 2 {
			v, err := model.ParseBINDDuration(b.Arg(1), false)
			if err != nil {
				im.lose(b, err.Error())
				continue
			}
			*d = v.Text
			continue
		}
		switch b.Name() {
		case "keys":
			for _, k := range b.Body {
				key, ok := dnssecKey(k)
				if !ok {
					im.lose(k, "a dnssec-policy key bind-fn cannot read (role lifetime L algorithm A [bits])")
					continue
				}
				p.Spec.Keys = append(p.Spec.Keys, key)
			}
			continue
		case "nsec3param":
			n := &v1alpha1.NSEC3Spec{}
			ok := true
			for i := 1; i+1 < len(b.Words); i += 2 {
				v := b.Arg(i + 1)
				switch b.Arg(i) {
				case "iterations":
					x, err := strconv.Atoi(v)
					ok = ok && err == nil
					n.Iterations = int32(x)
				case "optout":
					n.OptOut = yes(v)
				case "salt-length":
					x, err := strconv.Atoi(v)
					ok = ok && err == nil
					n.SaltLength = int32(x)
				default:
					ok = false
				}
			}
			if ok {
				p.Spec.NSEC3 = n
				continue
			}
		}
		im.lose(b, "dnssec-policy option bind-fn has no field for")
	}
	im.policies[name] = p.Name
	im.add("dnssec.yaml", p)
}

func dnssecKey(k namedconf.Located) (v1alpha1.DNSSECKey, bool) {
	var key v1alpha1.DNSSECKey
	w := k.Words
	if len(w) < 1 {
		return key, false
	}
	key.Role = w[0].Text
	for i := 1; i < len(w); i++ {
		switch w[i].Text {
		case "lifetime":
			if i+1 >= len(w) {
				return key, false
			}
			d, err := model.ParseBINDDuration(w[i+1].Text, true)
			if err != nil {
				return key, false
			}
			key.Lifetime = d.Text
			i++
		case "algorithm":
			if i+1 >= len(w) {
				return key, false
			}
			key.Algorithm = w[i+1].Text
			i++
			if i+1 < len(w) {
				if n, err := strconv.Atoi(w[i+1].Text); err == nil {
					b := int32(n)
					key.Bits = &b
					i++
				}
			}
		case "key-directory":
		default:
			return key, false
		}
	}
	return key, true
}
