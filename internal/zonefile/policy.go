package zonefile

import (
	"fmt"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"github.com/miekg/dns"
)

// policyTTL is the TTL of RPZ records: the rewritten answers carry it, so a
// short one lets a lifted block reach clients quickly.
const policyTTL = 60

// Policy builds a response policy zone: SOA, "NS localhost." and one CNAME
// per rule at <trigger>.<zone> (nxdomain "CNAME .", nodata "CNAME *.",
// passthru, drop and tcp-only their rpz-* targets, redirect its target), plus
// spec.records as written, relative to the policy zone.
func Policy(p *model.Policy) (*Zone, diag.Results) {
	b := newBuilder(p.Src, p.ZoneName, "spec.zoneName")
	b.ttl = policyTTL
	b.policy = true
	if b.origin == "" {
		return nil, b.rs
	}
	b.soa = &dns.SOA{
		Hdr:     b.hdr(b.origin, dns.TypeSOA, b.ttl),
		Ns:      "localhost.",
		Mbox:    defaultMailbox(b.origin),
		Refresh: model.DefaultRefresh,
		Retry:   model.DefaultRetry,
		Expire:  model.DefaultExpire,
		Minttl:  model.DefaultMinimum,
	}
	if _, err := canonical(b.soa.Mbox); err != nil {
		b.soa.Mbox = "."
	}
	b.add(&rrset{src: p.Src, field: "spec.zoneName", nameField: "spec.zoneName", owner: b.origin, typ: dns.TypeNS,
		entries: []entry{{rr: &dns.NS{Hdr: b.hdr(b.origin, dns.TypeNS, b.ttl), Ns: "localhost."}, field: "spec.zoneName"}}})

	for i, r := range p.Spec.Rules {
		b.addRule(p.Src, fmt.Sprintf("spec.rules[%d]", i), r)
	}
	for i, r := range p.Spec.Records {
		b.addUser(p.Src, fmt.Sprintf("spec.records[%d]", i), r.Name, r.Type, r.TTL, r.Values)
	}
	return b.finish()
}

// addRule adds one RPZ rule as a CNAME at its trigger name.
func (b *builder) addRule(src diag.Source, field string, r v1alpha1.PolicyRule) {
	trigger, err := absolute(r.Name)
	if err == nil && trigger == "." {
		err = fmt.Errorf("a rule cannot trigger on the root")
	}
	if err != nil {
		b.rs.Errorf(src, field+".name", "cannot use trigger name: %v", err)
		return
	}
	owner, err := canonical(strings.TrimSuffix(trigger, ".") + "." + b.origin)
	if err != nil {
		b.rs.Errorf(src, field+".name", "cannot use trigger name %q in policy zone %s: %v", r.Name, b.origin, err)
		return
	}
	var target string
	switch r.Action {
	case "", v1alpha1.ActionNXDOMAIN:
		target = "."
	case v1alpha1.ActionNODATA:
		target = "*."
	case v1alpha1.ActionPassthru:
		target = "rpz-passthru."
	case v1alpha1.ActionDrop:
		target = "rpz-drop."
	case v1alpha1.ActionTCPOnly:
		target = "rpz-tcp-only."
	case v1alpha1.ActionRedirect:
		if r.Target == "" {
			b.rs.Errorf(src, field+".target", "a redirect needs a target: the domain name to answer with")
			return
		}
		t, err := absolute(r.Target)
		if err != nil {
			b.rs.Errorf(src, field+".target", "cannot use redirect target: %v", err)
			return
		}
		target = t
	default:
		b.rs.Errorf(src, field+".action", "unknown action %q: use nxdomain, nodata, passthru, drop, tcp-only or redirect", r.Action)
		return
	}
	if r.Target != "" && r.Action != v1alpha1.ActionRedirect {
		b.rs.Errorf(src, field+".target", "a target is used only by action redirect; remove it or set action: redirect")
		return
	}
	rr := &dns.CNAME{Hdr: b.hdr(owner, dns.TypeCNAME, b.ttl), Target: target}
	b.add(&rrset{src: src, field: field, nameField: field + ".name", owner: owner, typ: dns.TypeCNAME, entries: []entry{{rr: rr, field: field + ".action"}}})
}
