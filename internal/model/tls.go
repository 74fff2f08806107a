package model

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// Defaults of spec.tls (docs/tls.md).
const (
	DefaultDoTPort = 853
	DefaultDoHPort = 443
	DefaultDoHPath = "/dns-query"
)

// TLS is spec.tls, checked, with its defaults applied.
type TLS struct {
	// SecretName holds tls.crt, tls.key and optional ca.crt.
	SecretName string
	// DoTPort and DoHPort are 0 when that listener is off.
	DoTPort, DoHPort int
	// DoHPath is the HTTP endpoint ("/dns-query").
	DoHPath string
	// Certificate is the cert-manager Certificate to render; nil for none.
	Certificate *Certificate
	// Transfers: the secondaries transfer from pod 0 over TLS; nil for
	// plain TCP.
	Transfers *TransferTLS
}

// Certificate is spec.tls.certificate, checked.
type Certificate struct {
	IssuerName, IssuerKind, IssuerGroup string
	// DNSNames: the Services' names, then the spec's, without duplicates.
	DNSNames              []string
	Duration, RenewBefore string
}

// TransferTLS is how a secondary reaches its primary over TLS.
type TransferTLS struct {
	// Strict verifies the primary's certificate (ca.crt, RemoteHostname).
	Strict bool
	// RemoteHostname is the name the certificate must hold (strict only).
	RemoteHostname string
}

// ServiceNames are the DNS names of the cluster's Services, fully
// qualified without the trailing dot: the serve, primary and headless
// Services and each pod's headless name's wildcard.
func (c *Cluster) ServiceNames() []string {
	sfx := "." + c.Namespace + ".svc." + strings.TrimSuffix(c.ClusterDomain(), ".")
	return []string{
		layout.ServeServiceName(c.Name) + sfx,
		layout.PrimaryServiceName(c.Name) + sfx,
		"*." + layout.HeadlessServiceName(c.Name) + sfx,
	}
}

// parseTLS checks spec.tls: a Secret name, ports apart from each other
// and from the ports the pod already uses, a DoH path BIND takes, an
// issuer and durations cert-manager takes. Bad fields are reported and
// the spec is dropped (nil), so nothing half-configured is rendered.
func parseTLS(rs *diag.Results, c *Cluster) *TLS {
	sp := c.Spec.TLS
	if sp == nil {
		return nil
	}
	src := c.Src
	n := len(*rs)
	t := &TLS{SecretName: sp.SecretName}
	if sp.SecretName == "" {
		rs.Errorf(src, "spec.tls.secretName", "cannot serve TLS: spec.tls.secretName is empty; name the Secret that holds tls.crt and tls.key (with spec.tls.certificate, cert-manager writes it)")
	} else if errs := validation.IsDNS1123Subdomain(sp.SecretName); len(errs) > 0 {
		rs.Errorf(src, "spec.tls.secretName", "invalid Secret name %q: %s", sp.SecretName, strings.Join(errs, "; "))
	}
	used := map[int]string{
		layout.DNSPort:                "DNS (53)",
		layout.RNDCPort:               "rndc (953, loopback)",
		layout.StatisticsPort:         "the statistics channel (8053, loopback)",
		int(c.Spec.Agent.MetricsPort): "the agent (spec.agent.metricsPort)",
	}
	port := func(field string, p int32, def int) int {
		if p == 0 {
			p = int32(def)
		}
		if p < 1 || p > 65535 {
			rs.Errorf(src, field, "invalid port %d: give a port from 1 to 65535", p)
			return 0
		}
		if who, ok := used[int(p)]; ok {
			rs.Errorf(src, field, "port %d is already used by %s; choose another port", p, who)
			return 0
		}
		used[int(p)] = field
		return int(p)
	}
	if sp.DoT != nil {
		t.DoTPort = port("spec.tls.dot.port", sp.DoT.Port, DefaultDoTPort)
	}
	if sp.DoH != nil {
		t.DoHPort = port("spec.tls.doh.port", sp.DoH.Port, DefaultDoHPort)
		t.DoHPath = sp.DoH.Path
		if t.DoHPath == "" {
			t.DoHPath = DefaultDoHPath
		}
		checkDoHPath(rs, src, t.DoHPath)
	}
	if cs := sp.Certificate; cs != nil {
		t.Certificate = parseCertificate(rs, c, cs)
	}
	if ts := sp.Transfers; ts != nil {
		t.Transfers = parseTransferTLS(rs, src, "spec.tls.transfers", ts, layout.PrimaryServiceName(c.Name)+"."+c.Namespace+".svc."+strings.TrimSuffix(c.ClusterDomain(), "."))
	}
	if t.DoTPort == 0 && sp.DoT == nil && sp.Transfers != nil {
		// Transfers over TLS reach pod 0 on its DoT listener: the
		// listener is there even without spec.tls.dot.
		t.DoTPort = port("spec.tls.dot.port", 0, DefaultDoTPort)
	}
	if sp.DoT == nil && sp.DoH == nil && sp.Transfers == nil && (c.Spec.Replication == nil || c.Spec.Replication.TransferTLS == nil) {
		rs.Warnf(src, "spec.tls", "spec.tls has no dot, doh or transfers: nothing uses the certificate; add dot: {} or doh: {}")
	}
	if (*rs)[n:].HasErrors() {
		return nil
	}
	return t
}

// checkDoHPath: an absolute HTTP path (BIND refuses an endpoint without
// the leading slash) of URL path characters.
func checkDoHPath(rs *diag.Results, src diag.Source, p string) {
	const f = "spec.tls.doh.path"
	if !strings.HasPrefix(p, "/") {
		rs.Errorf(src, f, "invalid DoH path %q: it must start with \"/\" (e.g. %q)", p, "/"+p)
		return
	}
	for i := 0; i < len(p); i++ {
		ch := p[i]
		ok := 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' || strings.IndexByte("/-._~!$&'()*+,;=:@%", ch) >= 0
		if !ok {
			rs.Errorf(src, f, "invalid DoH path %q: character %q at byte %d is not allowed in a URL path (no query, fragment, spaces or quotes)", p, rune(ch), i)
			return
		}
	}
}

func parseCertificate(rs *diag.Results, c *Cluster, cs *v1alpha1.CertificateSpec) *Certificate {
	src := c.Src
	out := &Certificate{IssuerName: cs.IssuerRef.Name, IssuerKind: cs.IssuerRef.Kind, IssuerGroup: cs.IssuerRef.Group, Duration: cs.Duration, RenewBefore: cs.RenewBefore}
	if out.IssuerName == "" {
		rs.Errorf(src, "spec.tls.certificate.issuerRef.name", "cannot render a Certificate without an issuer: name the cert-manager Issuer or ClusterIssuer")
	}
	if out.IssuerKind == "" {
		out.IssuerKind = "Issuer"
	}
	if out.IssuerKind != "Issuer" && out.IssuerKind != "ClusterIssuer" {
		rs.Errorf(src, "spec.tls.certificate.issuerRef.kind", "invalid issuer kind %q: use Issuer or ClusterIssuer", out.IssuerKind)
	}
	if out.IssuerGroup == "" {
		out.IssuerGroup = "cert-manager.io"
	}
	var dur, renew time.Duration
	for _, d := range []struct {
		f, v string
		to   *time.Duration
	}{{"duration", cs.Duration, &dur}, {"renewBefore", cs.RenewBefore, &renew}} {
		if d.v == "" {
			continue
		}
		v, err := time.ParseDuration(d.v)
		if err != nil || v <= 0 {
			rs.Errorf(src, "spec.tls.certificate."+d.f, "invalid %s %q: give a positive Go duration such as \"2160h\" (cert-manager's format)", d.f, d.v)
			continue
		}
		*d.to = v
	}
	if dur > 0 && renew > 0 && renew >= dur {
		rs.Errorf(src, "spec.tls.certificate.renewBefore", "renewBefore %s is not shorter than duration %s: cert-manager would renew at once, forever; make it shorter", cs.RenewBefore, cs.Duration)
	}
	seen := map[string]bool{}
	for _, n := range c.ServiceNames() {
		seen[n] = true
		out.DNSNames = append(out.DNSNames, n)
	}
	for i, n := range cs.DNSNames {
		name := strings.TrimSuffix(strings.ToLower(n), ".")
		check := strings.TrimPrefix(name, "*.")
		if errs := validation.IsDNS1123Subdomain(check); len(errs) > 0 {
			rs.Errorf(src, fmt.Sprintf("spec.tls.certificate.dnsNames[%d]", i), "invalid DNS name %q: %s", n, strings.Join(errs, "; "))
			continue
		}
		if !seen[name] {
			seen[name] = true
			out.DNSNames = append(out.DNSNames, name)
		}
	}
	return out
}

func parseTransferTLS(rs *diag.Results, src diag.Source, field string, ts *v1alpha1.TransferTLSSpec, defHost string) *TransferTLS {
	out := &TransferTLS{}
	switch ts.Mode {
	case v1alpha1.TLSStrict:
		out.Strict = true
		out.RemoteHostname = ts.RemoteHostname
		if out.RemoteHostname == "" {
			out.RemoteHostname = defHost
		}
		if errs := validation.IsDNS1123Subdomain(strings.TrimSuffix(out.RemoteHostname, ".")); len(errs) > 0 {
			rs.Errorf(src, field+".remoteHostname", "invalid host name %q: %s", out.RemoteHostname, strings.Join(errs, "; "))
		}
	case v1alpha1.TLSOpportunistic:
		if ts.RemoteHostname != "" {
			rs.Warnf(src, field+".remoteHostname", "remoteHostname is ignored in opportunistic mode (the certificate is not verified); use mode: strict to verify it")
		}
	default:
		rs.Errorf(src, field+".mode", "invalid mode %q: use strict (verify the primary's certificate) or opportunistic (encrypt without verifying)", ts.Mode)
	}
	return out
}

// replicationTLS checks spec.replication.transferTLS: the relay (pod 0 of
// c) transfers from p's DoT listener, so p serves TLS, and c mounts a
// Secret (spec.tls) whose ca.crt verifies p's certificate in strict mode.
// The default remote hostname is p's primary Service in p's namespace.
func (b *builder) replicationTLS(c, p *Cluster) (*TransferTLS, bool) {
	ts := c.Spec.Replication.TransferTLS
	if ts == nil {
		return nil, true
	}
	const f = "spec.replication.transferTLS"
	n := len(b.rs)
	if c.TLS == nil {
		b.rs.Errorf(c.Src, f, "cannot transfer from %q over TLS without spec.tls: set spec.tls.secretName (its ca.crt verifies %q's certificate in strict mode)", p.Name, p.Name)
	}
	if p.TLS == nil || p.TLS.DoTPort == 0 {
		b.rs.Errorf(c.Src, f, "cannot transfer from %q over TLS: %q serves no TLS; give it spec.tls with dot: {}", p.Name, p.Name)
	}
	x := parseTransferTLS(&b.rs, c.Src, f, ts, layout.PrimaryServiceName(p.Name)+"."+p.Namespace+".svc."+strings.TrimSuffix(p.ClusterDomain(), "."))
	if b.rs[n:].HasErrors() {
		return nil, false
	}
	return x, true
}
