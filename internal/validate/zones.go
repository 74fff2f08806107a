package validate

import (
	"fmt"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

func allZones(c *model.Cluster) []*model.Zone {
	var out []*model.Zone
	for _, v := range c.Views {
		out = append(out, v.Zones...)
	}
	return out
}

// checkZoneNames: zones that are not built into a zone file here (secondary,
// stub, forward) still put their name into named.conf.
func checkZoneNames(c *model.Cluster) diag.Results {
	var rs diag.Results
	for _, z := range allZones(c) {
		if z.Spec.Type == v1alpha1.ZonePrimary {
			continue // zonefile.Build checks it
		}
		if err := zoneName(z.Spec.ZoneName); err != nil {
			rs.Errorf(z.Src, "spec.zoneName", "cannot use zone name: %v", err)
		}
	}
	return rs
}

// checkZoneTypes: what each zone type needs, and what it ignores.
func checkZoneTypes(c *model.Cluster) diag.Results {
	var rs diag.Results
	for _, z := range allZones(c) {
		sp := z.Spec
		t := sp.Type
		switch t {
		case v1alpha1.ZonePrimary, v1alpha1.ZoneSecondary, v1alpha1.ZoneStub, v1alpha1.ZoneForward:
		default:
			continue // the writer reports unknown types
		}
		if (t == v1alpha1.ZoneSecondary || t == v1alpha1.ZoneStub) && len(sp.Primaries) == 0 {
			rs.Errorf(z.Src, "spec.primaries", "cannot serve %s zone %q without primaries: list the servers to transfer it from in spec.primaries", t, sp.ZoneName)
		}
		if t == v1alpha1.ZoneForward && z.Name == "." && len(c.Spec.Forwarders) > 0 {
			rs.Errorf(z.Src, "spec.zoneName", "cannot forward the root zone and set BindCluster %q spec.forwarders too: named refuses both (\"forwarders declared in root zone and in general configuration\"); keep one", c.Name)
		}
		if t == v1alpha1.ZoneForward && len(sp.Forwarders) == 0 {
			rs.Errorf(z.Src, "spec.forwarders", "cannot forward zone %q without forwarders: list them in spec.forwarders", sp.ZoneName)
		}
		recursive := c.Spec.Mode == v1alpha1.ModeResolver || (z.View != nil && z.View.Recursion != nil && *z.View.Recursion)
		if t == v1alpha1.ZoneForward && !recursive {
			rs.Warnf(z.Src, "spec.type", "forward zone %q does nothing on an authoritative cluster (recursion is off): set BindCluster %q spec.mode: resolver, give its view recursion: true, or remove the zone", sp.ZoneName, c.Name)
		}
		ignored := func(field, what string) {
			rs.Warnf(z.Src, field, "%s is ignored on a %s zone: remove it", what, t)
		}
		if t != v1alpha1.ZoneSecondary && t != v1alpha1.ZoneStub && len(sp.Primaries) > 0 {
			ignored("spec.primaries", "primaries")
		}
		if t != v1alpha1.ZoneSecondary && t != v1alpha1.ZoneStub && sp.TransferKeyRef != "" {
			ignored("spec.transferKeyRef", "transferKeyRef")
		}
		if t != v1alpha1.ZoneForward && (len(sp.Forwarders) > 0 || sp.ForwardOnly != nil) {
			ignored("spec.forwarders", "forwarders")
		}
		if t != v1alpha1.ZonePrimary {
			if len(sp.Nameservers) > 0 {
				ignored("spec.nameservers", "nameservers")
			}
			if sp.SOA != nil {
				ignored("spec.soa", "soa")
			}
			if t != v1alpha1.ZoneSecondary && len(sp.AllowTransfer) > 0 {
				ignored("spec.allowTransfer", "allowTransfer (only primary and secondary zones serve transfers)")
			}
			if t != v1alpha1.ZoneSecondary && len(sp.AlsoNotify) > 0 {
				ignored("spec.alsoNotify", "alsoNotify (only primary and secondary zones send NOTIFY)")
			}
			if sp.DNSSECPolicyRef != "" {
				rs.Errorf(z.Src, "spec.dnssecPolicyRef", "cannot sign %s zone %q: only a primary zone can have a dnssec-policy", t, sp.ZoneName)
			}
			if sp.DynamicUpdate {
				rs.Errorf(z.Src, "spec.dynamicUpdate", "cannot accept dynamic updates for %s zone %q: only a primary zone can", t, sp.ZoneName)
			}
			if sp.Catalog != nil && *sp.Catalog {
				ignored("spec.catalog", "catalog (only primary zones are catalog members)")
			}
		}
		if sp.ResponsePolicy && t != v1alpha1.ZoneSecondary {
			rs.Errorf(z.Src, "spec.responsePolicy", "cannot list %s zone %q in response-policy: only a secondary zone (a feed) can be; write a policy of your own as a BindPolicy", t, sp.ZoneName)
		}
		if sp.DefaultTTL != nil && (*sp.DefaultTTL < 0 || *sp.DefaultTTL > 1<<31-1) {
			rs.Errorf(z.Src, "spec.defaultTTL", "cannot use defaultTTL %d: use 0 to 2147483647 seconds", *sp.DefaultTTL)
		}
	}
	return rs
}

// checkRecordsOnNonPrimary: records of a secondary, stub or forward zone
// would be silently dropped.
func checkRecordsOnNonPrimary(c *model.Cluster) diag.Results {
	var rs diag.Results
	for _, z := range allZones(c) {
		switch z.Spec.Type {
		case v1alpha1.ZoneSecondary, v1alpha1.ZoneStub, v1alpha1.ZoneForward:
		default:
			continue // primary, or unknown (reported by the writer)
		}
		for _, s := range z.RRsets {
			field := s.Field
			if !s.FromRecord {
				field = "spec.records"
			}
			rs.Errorf(s.Src, field, "cannot add records to %s zone %q: only a primary zone has records here (a secondary gets them by transfer); remove them or make the zone primary", z.Spec.Type, z.Spec.ZoneName)
			if !s.FromRecord {
				break // one result for spec.records
			}
		}
	}
	return rs
}

// checkDynamic: a dynamic zone needs an update key, and writable storage to
// keep its updates.
func checkDynamic(c *model.Cluster) diag.Results {
	var rs diag.Results
	for _, z := range allZones(c) {
		sp := z.Spec
		if z.Spec.Type != v1alpha1.ZonePrimary {
			continue
		}
		if sp.DynamicUpdate && sp.UpdateKeyRef == "" {
			rs.Errorf(z.Src, "spec.updateKeyRef", "cannot accept dynamic updates for zone %q without an update key: name a BindTSIGKey in spec.updateKeyRef (updates are allowed by key only)", sp.ZoneName)
		}
		if !sp.DynamicUpdate && sp.UpdateKeyRef != "" {
			rs.Warnf(z.Src, "spec.updateKeyRef", "updateKeyRef is ignored without dynamicUpdate: true; set it, or remove the key reference")
		}
		// A signed zone's keys come back from the DNSSEC key Secret and named
		// re-signs at start: only dynamic updates are lost with the volume.
		if sp.DynamicUpdate && c.Spec.Storage == nil {
			rs.Warnf(z.Src, "spec", "zone %q keeps dynamic updates on the primary's data volume, but BindCluster %q has no spec.storage: they are lost when pod 0 restarts; set spec.storage", sp.ZoneName, c.Name)
		}
	}
	return rs
}

// checkSOATimers: timers BIND loads but that break replication or caching.
func checkSOATimers(c *model.Cluster) diag.Results {
	var rs diag.Results
	for _, z := range allZones(c) {
		soa := z.Spec.SOA
		if soa == nil || z.Spec.Type != v1alpha1.ZonePrimary {
			continue
		}
		val := func(p *int32, def int64) int64 {
			if p == nil || *p < 0 {
				return def
			}
			return int64(*p)
		}
		// A refresh, retry or expire under 1 is refused where the SOA is
		// built (zonefile); its relations say nothing more (docs/validation.md).
		low := func(p *int32) bool { return p != nil && *p < 1 }
		related := !low(soa.Refresh) && !low(soa.Retry) && !low(soa.Expire)
		refresh, retry := val(soa.Refresh, model.DefaultRefresh), val(soa.Retry, model.DefaultRetry)
		expire, minimum := val(soa.Expire, model.DefaultExpire), val(soa.Minimum, model.DefaultMinimum)
		if related {
			if retry >= refresh {
				rs.Warnf(z.Src, "spec.soa.retry", "cannot keep SOA retry (%d) at or above refresh (%d): a secondary that missed a refresh should retry sooner; lower retry", retry, refresh)
			}
			if expire <= refresh+retry {
				rs.Errorf(z.Src, "spec.soa.expire", "cannot use SOA expire %d: it must exceed refresh + retry (%d), or secondaries drop the zone before they can retry; use at least a week (604800)", expire, refresh+retry)
			} else if expire < 86400 {
				rs.Warnf(z.Src, "spec.soa.expire", "SOA expire %d is under a day: secondaries stop answering for the zone soon after the primary is unreachable; use one to four weeks", expire)
			}
		}
		if minimum > 86400 {
			rs.Warnf(z.Src, "spec.soa.minimum", "SOA minimum (negative-caching TTL) %d is over a day: a name added later stays NXDOMAIN in caches that long; use 60 to 3600 (RFC 2308)", minimum)
		}
		if refresh > 1<<31-1 || expire > 1<<31-1 {
			rs.Errorf(z.Src, "spec.soa", "cannot use SOA timers above 2147483647")
		}
	}
	return rs
}

// rfc1982Less reports whether serial a is lower than b in RFC 1982
// sequence space arithmetic.
func rfc1982Less(a, b uint32) bool {
	return a != b && (b-a) < 1<<31
}

// checkZoneData builds every zone the cluster serves the way the renderer
// does (so identical results merge): records parse, owners in zone, CNAME
// rules, one TTL per RRset, duplicates across BindZone.records and
// DNSRecords, glue, catalog and policy zones. It adds what only a whole
// file shows: the serial against the previous render. Size is no limit:
// the renderer splits every zone file over zones ConfigMaps, and the agent
// inlines a dynamic or signed zone's parts when it seeds it.
func checkZoneData(c *model.Cluster, prev *prior.Previous, zones *zonefile.Cache) diag.Results {
	var rs diag.Results
	for _, v := range c.Views {
		_, zrs := zonefile.ViewCatalog(v)
		rs = append(rs, zrs...)
		for _, p := range v.Policies {
			_, zrs := zonefile.Policy(p)
			rs = append(rs, zrs...)
		}
		for _, z := range v.Zones {
			if z.Spec.Type != v1alpha1.ZonePrimary {
				continue
			}
			built, zrs := zones.Build(z)
			rs = append(rs, zrs...)
			if built == nil {
				continue
			}
			rs = append(rs, checkZoneLimits(c, z, built)...)
			rs = append(rs, checkSerial(c, v, z, built, prev)...)
		}
	}
	return rs
}

// checkSerial: an explicit serial never goes below the previous output's,
// and must move when the content did.
func checkSerial(c *model.Cluster, v *model.View, z *model.Zone, built *zonefile.Zone, prev *prior.Previous) diag.Results {
	var rs diag.Results
	if z.Spec.SOA == nil || z.Spec.SOA.Serial == nil {
		return rs
	}
	st, ok := prev.ZoneState(c, v.Name, z.Name)
	if !ok {
		return rs
	}
	s := *z.Spec.SOA.Serial
	switch {
	case rfc1982Less(s, st.Serial):
		rs.Errorf(z.Src, "spec.soa.serial", "cannot lower the serial of zone %q from %d to %d: secondaries keep the higher serial and never transfer again; set a serial above %d, or remove spec.soa.serial to let bind-fn count", strings.TrimSuffix(z.Name, "."), st.Serial, s, st.Serial)
	case s == st.Serial && st.Hash != built.Hash:
		rs.Errorf(z.Src, "spec.soa.serial", "cannot change zone %q without changing its serial %d: secondaries would keep the old data; raise spec.soa.serial, or remove it to let bind-fn count", strings.TrimSuffix(z.Name, "."), s)
	}
	return rs
}

// checkDNSSECPolicies: key roles, sizes, NSEC3 parameters and the relations
// between a policy's durations that BIND enforces (lib/isccfg/kaspconf.c,
// 9.18 and 9.20). Algorithms, roles and durations are parsed in the model;
// a key it could not read is reported there, and the relations that need
// it are not checked.
func checkDNSSECPolicies(clusters []*model.Cluster) diag.Results {
	var rs diag.Results
	for _, p := range distinct(clusters, func(c *model.Cluster) []*model.DNSSECPolicy { return c.DNSSECPolicies }) {
		for i, k := range p.Spec.Keys {
			if k.Bits == nil {
				continue
			}
			f := fmt.Sprintf("spec.keys[%d].bits", i)
			alg := strings.ToLower(k.Algorithm)
			a, known := vocab.DNSSECByName(alg)
			switch {
			case alg == "":
				rs.Errorf(p.Src, f, "cannot set a key size for the default algorithm %s: only RSA keys take bits", vocab.DefaultDNSSEC)
			case !known:
				// one the model refused: no size to check
			case !a.RSA:
				rs.Errorf(p.Src, f, "cannot set a key size for algorithm %q: only RSA keys take bits", a.Name)
			case !a.Accepted:
				// an RSA algorithm the model refused (rsasha1, nsec3rsasha1)
			case *k.Bits < 1024 || *k.Bits > 4096:
				rs.Errorf(p.Src, f, "cannot use an RSA key of %d bits: BIND takes 1024 to 4096 (use 2048 or more)", *k.Bits)
			}
		}
		complete := len(p.Keys) > 0 && (len(p.Spec.Keys) == 0 || len(p.Keys) == len(p.Spec.Keys))
		if complete {
			rs = append(rs, checkPolicyRoles(p)...)
		}
		sigs := checkPolicySignatures(p)
		rs = append(rs, sigs...)
		if complete && len(sigs) == 0 {
			// BIND checks lifetimes only once the signature durations pass.
			rs = append(rs, checkPolicyLifetimes(p)...)
		}
		if n := p.Spec.NSEC3; n != nil {
			if n.Iterations != 0 {
				rs.Errorf(p.Src, "spec.nsec3.iterations", "cannot use %d NSEC3 iterations: BIND 9.20 refuses any value but 0 (\"nsec3 iterations value %d not allowed, must be zero\"; 9.18 warns), and extra iterations add no security (RFC 9276); use 0", n.Iterations, n.Iterations)
			}
			if n.SaltLength < 0 || n.SaltLength > 255 {
				rs.Errorf(p.Src, "spec.nsec3.saltLength", "cannot use an NSEC3 salt of %d bytes: use 0 (RFC 9276), at most 255", n.SaltLength)
			}
		}
	}
	return rs
}

// checkPolicyRoles: BIND wants, per algorithm, a csk or both a ksk and a
// zsk ("dnssec-policy: algorithm N requires both KSK and ZSK roles").
func checkPolicyRoles(p *model.DNSSECPolicy) diag.Results {
	var rs diag.Results
	byAlg := map[string]map[string]bool{}
	var algs []string
	for _, k := range p.Keys {
		if byAlg[k.Algorithm] == nil {
			byAlg[k.Algorithm] = map[string]bool{}
			algs = append(algs, k.Algorithm)
		}
		byAlg[k.Algorithm][k.Role] = true
	}
	for _, a := range algs {
		if r := byAlg[a]; !r["csk"] && (!r["ksk"] || !r["zsk"]) {
			rs.Errorf(p.Src, "spec.keys", "cannot sign with dnssec-policy %q: algorithm %s needs a csk, or both a ksk and a zsk of that algorithm (BIND: \"algorithm requires both KSK and ZSK roles\")", p.Name, a)
		}
	}
	return rs
}

// kaspSignaturesJitter is BIND's signatures-jitter (PT12H), which the API
// does not set.
const kaspSignaturesJitter = 12 * 3600

// policyDuration is a duration of p in seconds, BIND's default when unset,
// and the field that set it ("" for the default).
func policyDuration(p *model.DNSSECPolicy, kw string) (uint64, string) {
	for _, d := range p.Durations {
		if d.Keyword == kw {
			return d.Value.Seconds, "spec." + d.Field
		}
	}
	d, _ := vocab.PolicyDurationByKeyword(kw)
	return d.Default, ""
}

// checkPolicySignatures: signatures-refresh under 90 % of both validities,
// and BIND's 12-hour signatures-jitter within them.
func checkPolicySignatures(p *model.DNSSECPolicy) diag.Results {
	var rs diag.Results
	refresh, refreshField := policyDuration(p, "signatures-refresh")
	for _, kw := range []string{"signatures-validity-dnskey", "signatures-validity"} {
		validity, validityField := policyDuration(p, kw)
		if float64(refresh) >= float64(validity)*0.9 {
			f := refreshField
			if f == "" {
				f = validityField
			}
			rs.Errorf(p.Src, f, "cannot refresh signatures %d seconds before they expire with %s %d seconds: BIND wants signatures-refresh under 90%% of %s (named refuses the policy: \"signatures-refresh must be at most 90%% of the %s\"); lower signaturesRefresh or raise the validity", refresh, kw, validity, kw, kw)
			continue
		}
		if validity < kaspSignaturesJitter {
			rs.Errorf(p.Src, validityField, "cannot use %s of %d seconds: BIND spreads signature expiry over signatures-jitter (PT12H, its default) and refuses a validity shorter than that (\"signatures-jitter cannot be larger than %s\"); use at least PT12H", kw, validity, kw)
		}
	}
	return rs
}

// checkPolicyLifetimes: a key with a finite lifetime must outlive the
// rollover that replaces it, as BIND computes it (kaspconf.c):
//
//	publish  = dnskey-ttl + publish-safety + zone-propagation-delay
//	KSK      > max(publish, parent-ds-ttl + retire-safety + parent-propagation-delay)
//	ZSK      > max(publish, signatures-validity - signatures-refresh + max-zone-ttl + retire-safety + zone-propagation-delay)
//
// a CSK both ("key lifetime is shorter than the time it takes to do a
// rollover").
func checkPolicyLifetimes(p *model.DNSSECPolicy) diag.Results {
	var rs diag.Results
	d := func(kw string) uint64 { v, _ := policyDuration(p, kw); return v }
	publish := d("dnskey-ttl") + d("publish-safety") + d("zone-propagation-delay")
	kskRetire := d("parent-ds-ttl") + d("retire-safety") + d("parent-propagation-delay")
	zskRetire := d("signatures-validity") - d("signatures-refresh") + d("max-zone-ttl") + d("retire-safety") + d("zone-propagation-delay")
	kskMin, zskMin := max(publish, kskRetire), max(publish, zskRetire)
	for i, k := range p.Keys {
		if k.Lifetime.Unlimited {
			continue
		}
		min, how := uint64(0), ""
		if k.Role == "ksk" || k.Role == "csk" {
			min, how = kskMin, fmt.Sprintf("as a KSK, the larger of dnskeyTTL + publishSafety + zonePropagationDelay (%d) and parentDSTTL + retireSafety + parentPropagationDelay (%d)", publish, kskRetire)
		}
		if (k.Role == "zsk" || k.Role == "csk") && zskMin > min {
			min, how = zskMin, fmt.Sprintf("as a ZSK, the larger of dnskeyTTL + publishSafety + zonePropagationDelay (%d) and signaturesValidity - signaturesRefresh + maxZoneTTL + retireSafety + zonePropagationDelay (%d)", publish, zskRetire)
		}
		if k.Lifetime.Seconds <= min {
			rs.Errorf(p.Src, fmt.Sprintf("spec.keys[%d].lifetime", i), "cannot give a %s the lifetime %s (%d seconds): a rollover of it takes %d seconds with this policy's TTLs, safeties and delays (%s; unset ones at BIND's defaults), and named refuses a lifetime that is not longer (\"key lifetime is shorter than the time it takes to do a rollover\"); use a longer lifetime, or unlimited", k.Role, k.Lifetime.Text, k.Lifetime.Seconds, min, how)
		}
	}
	return rs
}

// checkViews: view options that leave the cluster's own traffic, or the
// user's intent, unmatched.
func checkViews(c *model.Cluster) diag.Results {
	var rs diag.Results
	if !c.HasViews {
		return rs
	}
	for i, v := range c.Views {
		if len(v.MatchClients) == 0 && len(v.MatchDestinations) == 0 && i < len(c.Views)-1 {
			rs.Warnf(c.Views[i+1].Src, "spec.order", "view %q is never used: view %q before it (order %d) matches every client; give it matchClients or a higher order", c.Views[i+1].Name, v.Name, v.Order)
		}
	}
	return rs
}

// checkSecondaryPaths: with replicas > 1 every primary zone must reach the
// secondaries. They transfer each view's zones signed with the view's
// transfer key, and the primary finds the view by that key: two views with
// one transfer key send every transfer to the first view, and a view that
// matches destinations may not match the primary's pod address at all.
func checkSecondaryPaths(c *model.Cluster) diag.Results {
	var rs diag.Results
	if c.Spec.Replicas < 2 || !c.HasViews {
		return rs
	}
	byKey := map[string]*model.View{}
	for _, v := range c.Views {
		if v.TransferKey == nil {
			continue
		}
		k := strings.ToLower(v.TransferKey.KeyName)
		if first := byKey[k]; first != nil {
			src, field := v.Src, "metadata.name"
			if v.Catalog != nil {
				src, field = v.Catalog.Src, "spec.transferKeyRef"
			}
			rs.Errorf(src, field, "cannot share transfer key %q between views %q and %q: the primary finds a view by its transfer key, so the secondaries would get view %q's zones for both; give each view's catalog its own transferKeyRef", v.TransferKey.KeyName, first.Name, v.Name, first.Name)
			continue
		}
		byKey[k] = v
		if len(v.MatchDestinations) > 0 && hasPrimary(v) {
			rs.Warnf(v.Src, "spec.matchDestinations", "view %q matches destinations, but the secondaries reach the primary on its pod address, which a Service hides: if no destination matches it they cannot transfer this view's zones; include the pod network or drop matchDestinations", v.Name)
		}
	}
	return rs
}

func hasPrimary(v *model.View) bool {
	for _, z := range v.Zones {
		if z.Spec.Type == v1alpha1.ZonePrimary {
			return true
		}
	}
	return false
}

// checkMaxZoneTTL: named refuses to load a zone signed by a dnssec-policy
// when any TTL is above the policy's max-zone-ttl (PT24H unless set):
// "TTL exceeds configured max-zone-ttl", the zone is not loaded.
// named-checkconf -z does not catch it.
func checkMaxZoneTTL(c *model.Cluster) diag.Results {
	var rs diag.Results
	for _, v := range c.Views {
		for _, z := range v.Zones {
			if z.DNSSEC == nil || z.Spec.Type != v1alpha1.ZonePrimary {
				continue
			}
			limit := z.DNSSEC.MaxZoneTTL
			if limit == 0 {
				continue // maxZoneTTL PT0S: no limit (named 9.18 and 9.20 load any TTL)
			}
			why := fmt.Sprintf("dnssec-policy %q allows at most %d seconds (maxZoneTTL", z.DNSSEC.Name, limit)
			if z.DNSSEC.Spec.MaxZoneTTL == "" {
				why += ", BIND's default PT24H"
			}
			why += "); named would not load the zone"
			def := int64(model.DefaultTTL)
			if z.Spec.DefaultTTL != nil {
				def = int64(*z.Spec.DefaultTTL)
				if def > int64(limit) {
					rs.Errorf(z.Src, "spec.defaultTTL", "cannot use TTL %d in zone %q: %s; lower the TTL or raise the policy's maxZoneTTL", def, strings.TrimSuffix(z.Name, "."), why)
					continue
				}
			}
			for _, r := range z.RRsets {
				if r.TTL == nil || int64(*r.TTL) <= int64(limit) {
					continue
				}
				rs.Errorf(r.Src, r.Field+".ttl", "cannot use TTL %d in zone %q: %s; lower the TTL or raise the policy's maxZoneTTL", *r.TTL, strings.TrimSuffix(z.Name, "."), why)
			}
		}
	}
	return rs
}

// maxFileName is the longest zone file name: a ConfigMap key holds at most
// 253 characters (the API server), a file name 255 bytes.
const maxFileName = 253

// checkZoneFiles: every zone file name (db.<view>_<zone>, escaped) must fit
// a ConfigMap key and a file name; one zone signed in two views would share
// named's key-directory, which named refuses ("key-directory ... already in
// use by zone ... with policy ...").
func checkZoneFiles(c *model.Cluster) diag.Results {
	var rs diag.Results
	signed := map[string]*model.Zone{}
	for _, v := range c.Views {
		for _, z := range v.Zones {
			if n := model.ZoneFileName("db", v.Name, z.Name); len(n) > maxFileName {
				rs.Errorf(z.Src, "spec.zoneName", "cannot name the file of zone %q in view %q: %q is %d characters, over the %d a ConfigMap key and a file name allow; shorten the view or zone name", strings.TrimSuffix(z.Name, "."), v.Name, n[:40]+"...", len(n), maxFileName)
			}
			if z.DNSSEC == nil || z.Spec.Type != v1alpha1.ZonePrimary {
				continue
			}
			if first := signed[z.Name]; first != nil {
				rs.Errorf(z.Src, "spec.dnssecPolicyRef", "cannot sign zone %q in view %q too: %s signs it in view %q, and named keeps one key directory per zone name (\"key-directory ... already in use\"); sign it in one view only", strings.TrimSuffix(z.Name, "."), v.Name, first.Src.Ref, first.View.Name)
				continue
			}
			signed[z.Name] = z
		}
		if v.Catalog != nil {
			if n := model.ZoneFileName("catalog", v.Name, v.Catalog.ZoneName); len(n) > maxFileName {
				rs.Errorf(v.Catalog.Src, "spec.zoneName", "cannot name the file of catalog zone %q: %d characters, over %d; shorten the view or zone name", strings.TrimSuffix(v.Catalog.ZoneName, "."), len(n), maxFileName)
			}
		}
		for _, p := range v.Policies {
			if n := model.ZoneFileName("rpz", v.Name, p.ZoneName); len(n) > maxFileName {
				rs.Errorf(p.Src, "spec.zoneName", "cannot name the file of policy zone %q: %d characters, over %d; shorten the view or zone name", strings.TrimSuffix(p.ZoneName, "."), len(n), maxFileName)
			}
		}
	}
	return rs
}

// distinct lists the objects of every cluster once: a shared object (no
// clusterRef) is in the scope of each cluster of its namespace, and checked
// once.
func distinct[T any](clusters []*model.Cluster, of func(*model.Cluster) []*T) []*T {
	seen := map[*T]bool{}
	var out []*T
	for _, c := range clusters {
		for _, o := range of(c) {
			if !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
	}
	return out
}

// checkPolicyApex: an authoritative cluster applies its response policy
// zones to every query (recursive-only no), the secondaries' SOA queries
// to the primary included. A rule (other than passthru) whose trigger is the
// apex of a primary zone of the same view, or a wildcard over it, rewrites
// that SOA query, and with replicas > 1 the secondaries never transfer the
// zone (differential seed 109: a drop rule on bücher.example).
func checkPolicyApex(c *model.Cluster) diag.Results {
	var rs diag.Results
	if c.Spec.Replicas < 2 || c.Spec.Mode != v1alpha1.ModeAuthoritative {
		return rs // a resolver applies RPZ to recursive queries only
	}
	for _, v := range c.Views {
		apex := map[string]*model.Zone{}
		for _, z := range v.Zones {
			if z.Spec.Type == v1alpha1.ZonePrimary {
				apex[z.Name] = z
			}
		}
		if len(apex) == 0 {
			continue
		}
		for _, p := range v.Policies {
			for i, r := range p.Spec.Rules {
				if r.Action == v1alpha1.ActionPassthru {
					continue
				}
				name := model.CanonicalName(r.Name)
				for zn, z := range apex {
					wild := strings.HasPrefix(name, "*.") && strings.HasSuffix(zn, name[1:])
					if name != zn && !wild {
						continue
					}
					rs.Errorf(p.Src, fmt.Sprintf("spec.rules[%d].name", i), "cannot apply rule %q to the apex of zone %q (%s): the policy also rewrites the secondaries' SOA queries to the primary, so they would never transfer the zone; narrow the rule, or use passthru", r.Name, strings.TrimSuffix(zn, "."), z.Src.Ref)
				}
			}
		}
	}
	return rs
}

// checkViewNameSpace: a view has one name space of zones. A BindZone, the
// view's catalog zone and its response policy zones each become a zone
// statement, so two of them with one name (any kinds, any case: BIND
// compares names case-insensitively) are a zone defined twice, and named
// refuses the config. The model reports two BindZones; this reports the
// catalog or policy that takes a name already used.
func checkViewNameSpace(c *model.Cluster) diag.Results {
	var rs diag.Results
	for _, v := range c.Views {
		first := map[string]diag.ObjectRef{}
		for _, z := range v.Zones {
			first[z.Name] = z.Src.Ref
		}
		taken := func(src diag.Source, what, name string) {
			if prev, ok := first[name]; ok {
				rs.Errorf(src, "spec.zoneName", "cannot define %s %q%s: %s already uses that zone name (zone names are case-insensitive; a zone, the catalog zone and the response policy zones of a view share one name space, and named refuses a zone defined twice); rename one", what, strings.TrimSuffix(name, "."), inView(v), prev)
				return
			}
			first[name] = src.Ref
		}
		if v.Catalog != nil {
			taken(v.Catalog.Src, "catalog zone", v.Catalog.ZoneName)
		}
		for _, p := range v.Policies {
			taken(p.Src, "response policy zone", p.ZoneName)
		}
	}
	return rs
}

func inView(v *model.View) string {
	if v.Name == "" {
		return ""
	}
	return fmt.Sprintf(" in view %q", v.Name)
}
