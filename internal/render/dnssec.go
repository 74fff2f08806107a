package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"github.com/miekg/dns"
)

// DNSSECBudget is the most bytes of key files the DNSSEC Secret carries
// (Kubernetes refuses objects over 1 MiB): about 400 zones with an ECDSA
// KSK and ZSK (about 2 KB each), twice as many with one CSK.
const DNSSECBudget = 768 << 10

// signedZone is a zone signed by the cluster's primary, with its policy.
type signedZone struct {
	z      *model.Zone
	policy *model.DNSSECPolicy
}

// signedZones are c's signed primary zones by canonical name. A zone name
// has one key set whatever view serves it: every signed zone shares one
// key-directory, where BIND finds keys by zone name.
func signedZones(c *model.Cluster) (map[string]signedZone, diag.Results) {
	var rs diag.Results
	out := map[string]signedZone{}
	for _, v := range c.Views {
		for _, z := range v.Zones {
			if z.DNSSEC == nil || z.Spec.Type != v1alpha1.ZonePrimary {
				continue
			}
			if o, ok := out[z.Name]; ok {
				if o.policy != z.DNSSEC {
					rs.Errorf(z.Src, "spec.dnssecPolicyRef", "cannot sign zone %q with dnssec-policy %q: another view signs it with %q, and a zone name has one key set in the cluster; use one policy for every view of the zone", bare(z.Name), z.DNSSEC.Name, o.policy.Name)
				}
				continue
			}
			out[z.Name] = signedZone{z: z, policy: z.DNSSEC}
		}
	}
	return out, rs
}

// PolicySpecs are the keys a BindDNSSECPolicy asks for, as the rendered
// dnssec-policy says (no keys: one CSK, ecdsap256sha256, unlimited), from
// the model's parsed keys (algorithm aliases resolved). It returns false
// when a key could not be read (the model reported it).
func PolicySpecs(p *model.DNSSECPolicy) ([]dnssec.Spec, bool) {
	if n := len(p.Spec.Keys); n > 0 && len(p.Keys) != n || len(p.Keys) == 0 {
		return nil, false
	}
	var out []dnssec.Spec
	for _, k := range p.Keys {
		alg, err := dnssec.Algorithm(k.Algorithm)
		if err != nil {
			return nil, false
		}
		s := dnssec.Spec{Role: k.Role, Algorithm: alg, Lifetime: k.LifetimeSeconds()}
		if k.Bits != nil {
			s.Bits = int(*k.Bits)
		}
		out = append(out, s)
	}
	return out, true
}

// dnssecObjects renders the cluster's DNSSEC key Secret (every signed zone's
// keys: kept from the previous output, new for a new zone, gone with a
// removed zone) and the DS ConfigMap (the DS records for the parents, and
// the DNSKEYs they came from), and an info result per zone with its DS.
//
// It returns every signed zone's keys by zone name (those it could make or
// keep), for the DS of a parent zone in the cluster (childDS).
func dnssecObjects(c *model.Cluster, prev *prior.Previous, opt Options, out *objectList) (map[string]zoneKeySet, diag.Results) {
	zones, rs := signedZones(c)
	if len(zones) == 0 {
		return nil, rs
	}
	sets := map[string]zoneKeySet{}
	secretName := layout.DNSSECSecretName(c.Name)
	imported := c.DNSSECImported()
	var kept []*dnssec.Key
	rnd := opt.Rand
	if imported {
		// The Secret is managed elsewhere: the render sees the public keys
		// only, and makes none.
		rnd = nil
		var public []string
		if c.Spec.DNSSEC != nil {
			public = c.Spec.DNSSEC.PublicKeys
		}
		for i, text := range public {
			k, err := dnssec.PublicKey(text)
			if err != nil {
				rs.Errorf(c.Src, fmt.Sprintf("spec.dnssec.publicKeys[%d]", i), "cannot read the DNSKEY: %v; paste the record line of the key's .key file", err)
				continue
			}
			kept = append(kept, k)
		}
	} else {
		var probs []dnssec.Problem
		kept, probs = dnssec.Parse(prev.Secret(c.Namespace, secretName))
		for _, p := range probs {
			rs.Errorf(c.Src, "", "cannot use file %q of the DNSSEC key Secret %q: %v; fix it, or remove it from the Secret", p.File, secretName, p.Err)
		}
	}
	byZone := map[string][]*dnssec.Key{}
	for _, k := range kept {
		byZone[k.Zone()] = append(byZone[k.Zone()], k)
	}
	lastRec := prev.DNSKEYs(c.Namespace, layout.DSConfigMapName(c.Name))
	lastRolls := prev.Rollovers(c.Namespace, layout.DSConfigMapName(c.Name))
	rollRec := dnssec.RollRecord{}
	names := slices.Sorted(maps.Keys(zones))

	rs = append(rs, rollWarnings(zones)...)
	files := map[string][]byte{}
	rec := prior.DNSKEYRecord{}
	var dsText strings.Builder
	var anchors []nc.Stmt
	size := 0
	for _, name := range names {
		sz := zones[name]
		specs, ok := PolicySpecs(sz.policy)
		if !ok {
			continue
		}
		zr, rrs := planRolls(sz.z, lastRolls[name], byZone[name])
		rs = append(rs, rrs...)
		keys, stray, err := dnssec.ZoneKeys(name, specs, zr.kept, rnd)
		if err != nil && imported {
			rs.Errorf(c.Src, "spec.dnssec.publicKeys", "cannot sign zone %q with dnssec-policy %q (%s): %s, and spec.dnssec.publicKeys has no DNSKEY for every key of the policy; add the record line of each of the zone's .key files (the Secret %q must hold the same keys)", bare(name), sz.policy.Name, describeSpecs(specs), importedBy(c), secretName)
			continue
		}
		if err != nil {
			rs.Errorf(sz.z.Src, "spec.dnssecPolicyRef", "cannot make DNSSEC keys for zone %q: %v", bare(name), err)
			continue
		}
		where := fmt.Sprintf("the DNSSEC key Secret %q holds", secretName)
		if imported {
			where = "spec.dnssec.publicKeys of BindCluster " + fmt.Sprintf("%q", c.Name) + " lists"
		}
		for _, k := range stray {
			rs.Errorf(sz.z.Src, "spec.dnssecPolicyRef", "cannot sign zone %q with dnssec-policy %q: %s its %s, which no key of the policy (%s) matches, so named would ignore it and make keys of its own that no DS at the parent matches; name the key's role and algorithm in the policy again, or remove the key (and the ConfigMap %q, the record of the last keys) to start over with new keys, then publish the new DS", bare(name), sz.policy.Name, where, k.Describe(), describeSpecs(specs), layout.DSConfigMapName(c.Name))
		}
		rs = append(rs, zr.startRolls(sz.z, specs, keys, rnd, imported)...)
		if len(zr.record) > 0 {
			rollRec[name] = zr.record
		}
		// The successors of rollovers in progress ship beside the policy's
		// keys, and their DS goes to the parent beside the old one (RFC
		// 7583 double-DS: the old DS leaves only when the user says done).
		all := slices.Concat(keys, zr.successors)
		dnssec.Sort(all)
		sets[name] = zoneKeySet{keys: all, policy: sz.policy, zone: sz.z}
		var now, explained []string
		for _, k := range all {
			if !imported {
				for f, b := range k.StageFiles(zr.stage[k.Tag()]) {
					files[f] = b
					size += len(f) + len(b)
				}
			}
			id := keyID(k)
			now = append(now, id)
			if !slices.Contains(zr.started, k.Tag()) {
				explained = append(explained, id)
			}
		}
		// The record of the last keys takes a rollover's changes: the
		// successor it starts with, the old key it finishes without.
		for _, k := range zr.dropped {
			explained = append(explained, keyID(k))
		}
		sort.Strings(now)
		sort.Strings(explained)
		rec[name] = now
		rs = append(rs, rollResults(sz.z, zr, keys, parentZone(c, name))...)
		var ds []string
		for _, d := range dnssec.DSSet(all) {
			line := fmt.Sprintf("%s %d IN DS %d %d %d %s", d.Hdr.Name, d.Hdr.Ttl, d.KeyTag, d.Algorithm, d.DigestType, strings.ToUpper(d.Digest))
			ds = append(ds, line)
			dsText.WriteString(line + "\n")
			anchors = append(anchors, nc.S(nc.Str(name), nc.Kw("static-ds"), nc.Int(int64(d.KeyTag)), nc.Int(int64(d.Algorithm)), nc.Int(int64(d.DigestType)), nc.Str(strings.ToUpper(d.Digest))))
		}
		// The other signers' KSKs (multi-signer) need their DS beside ours.
		for _, line := range otherSignerDSLines(sz.z) {
			ds = append(ds, line)
			dsText.WriteString(line + "\n")
		}
		if was, ok := lastRec[name]; ok && len(stray) == 0 && !slices.Equal(was, explained) {
			rs.Errorf(sz.z.Src, "spec.dnssecPolicyRef", "cannot change the DNSSEC keys of signed zone %q (DNSKEYs %s at the last render, now %s): the DNSSEC key Secret %q was changed, replaced or lost, and unless the parent's DS matches the new keys every validating resolver fails the zone; restore the Secret from your backup, or, to re-key on purpose, delete the ConfigMap %q (the record of the last keys) from the package, render, and publish the new DS %s", bare(name), strings.Join(was, " "), strings.Join(now, " "), where2(imported, secretName), layout.DSConfigMapName(c.Name), strings.Join(ds, "; "))
		}
		for _, line := range ds {
			rs = append(rs, diag.Result{Severity: diag.Info, Source: sz.z.Src, Field: "spec.dnssecPolicyRef",
				Message: fmt.Sprintf("DS record to publish in the parent of zone %q: %s (all DS records: ConfigMap %q, %s)", bare(name), line, layout.DSConfigMapName(c.Name), layout.DSFile)})
		}
	}
	if size > DNSSECBudget {
		rs.Errorf(c.Src, "", "cannot keep the DNSSEC keys of %d signed zones in one Secret: %d bytes, over %d (Kubernetes refuses objects over 1 MiB); sign fewer zones in this cluster, or use smaller keys (ecdsap256sha256, one csk)", len(names), size, DNSSECBudget)
	}
	recJSON, err := json.Marshal(rec)
	if err != nil {
		rs.Errorf(c.Src, "", "cannot encode the DNSSEC key record: %v", err)
	}
	ta, err := nc.Format(nc.B([]nc.Word{nc.Kw("trust-anchors")}, anchors...))
	if err != nil {
		rs.Errorf(c.Src, "", "cannot write the trust anchors: %v", err)
	}
	if !imported {
		s := objects.DNSSECSecret(c, files)
		out.add("secret", s.Name, s)
	} else if c.ExternalSecrets() {
		rs = append(rs, diag.Result{Severity: diag.Info, Source: c.Src, Field: "spec.dnssec.publicKeys", Message: fmt.Sprintf(
			"spec.secrets of BindCluster %q is external: the primary waits for Secret %q in namespace %q, made elsewhere, with the signing keys of zones %s: for each key of spec.dnssec.publicKeys, data keys K<zone>_<alg>_<tag>.key and K<zone>_<alg>_<tag>.private (dnssec-keygen's files, \"+\" written \"_\"), optional .state (docs/security.md)",
			c.Name, secretName, c.Namespace, strings.Join(bareAll(names), ", "))})
	}
	ann := map[string]string{layout.DNSSECKeysAnnotation: string(recJSON)}
	if len(rollRec) > 0 {
		rollJSON, err := json.Marshal(rollRec)
		if err != nil {
			rs.Errorf(c.Src, "", "cannot encode the DNSSEC rollover record: %v", err)
		}
		ann[layout.DNSSECRolloversAnnotation] = string(rollJSON)
	}
	cm := objects.DSConfigMap(c, map[string]string{
		layout.DSFile:           dsText.String(),
		layout.TrustAnchorsFile: string(ta),
	}, ann)
	out.add("configmap", cm.Name, cm)
	return sets, rs
}

// keyID is how the record of the last keys names a key: alg/flags/tag.
func keyID(k *dnssec.Key) string {
	return fmt.Sprintf("%d/%d/%d", k.DNSKEY.Algorithm, k.DNSKEY.Flags, k.Tag())
}

// zoneKeySet is a signed zone's keys and policy.
type zoneKeySet struct {
	keys   []*dnssec.Key
	policy *model.DNSSECPolicy
	zone   *model.Zone
}

func describeSpecs(specs []dnssec.Spec) string {
	var s []string
	for _, sp := range specs {
		s = append(s, sp.String())
	}
	return strings.Join(s, ", ")
}

// rollWarnings: a KSK or CSK with a finite lifetime is rolled by named on
// the primary's volume, and the render's Secret never learns the successor
// (verified on BIND 9.18: named starts the roll at its first start, since
// the rendered keys date from dnssec.Epoch, creating a successor key and
// waiting for its DS at the parent). A lost volume then brings back the
// original key and named starts over. ZSK rolls are harmless: the DS pins
// only the KSK, so they are left to named.
func rollWarnings(zones map[string]signedZone) diag.Results {
	var rs diag.Results
	seen := map[*model.DNSSECPolicy]bool{}
	for _, sz := range zones {
		p := sz.policy
		if seen[p] {
			continue
		}
		seen[p] = true
		for _, k := range p.Keys {
			if k.Role != dnssec.RoleKSK && k.Role != dnssec.RoleCSK {
				continue
			}
			if k.LifetimeSeconds() > 0 {
				rs.Warnf(p.Src, k.Field+".lifetime", "a %s with lifetime %s is rolled by named on the primary's volume, starting at its first start (bind-fn's keys are dated 2000-01-01): the successor and its DS are not in the DNSSEC key Secret, and a lost volume brings the original key back; use lifetime unlimited and roll the %s through the zones' spec.dnssecRollover.%s, which keeps both keys in the Secret (docs/dnssec.md)", strings.ToUpper(k.Role), k.Lifetime.Text, strings.ToUpper(k.Role), k.Role)
			}
		}
	}
	return rs
}

// importedBy says why a cluster's DNSSEC keys are imported, for messages.
func importedBy(c *model.Cluster) string {
	if c.ExternalSecrets() {
		return "spec.secrets is external"
	}
	return "spec.dnssec.importExisting is set"
}

// bareAll is names without their trailing dots.
func bareAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = bare(n)
	}
	return out
}

// where2 names where a cluster's keys come from, for messages.
func where2(imported bool, secretName string) string {
	if imported {
		return secretName + " (spec.dnssec.publicKeys)"
	}
	return secretName
}

// cdsOptions are a policy's cdnskey and cds-digest-types, which only BIND
// 9.20 reads. BIND 9.18 publishes CDNSKEY and a SHA-256 CDS (what 9.20
// does by default), so a policy that asks for that renders nothing, and
// one that asks for more is refused on a 9.18 cluster, where it is read.
func (b *confBuilder) cdsOptions(p *model.DNSSECPolicy) []nc.Stmt {
	sp := p.Spec
	rel, _ := b.c.BINDRelease()
	var out []nc.Stmt
	if sp.CDNSKEY != nil {
		if rel == model.BIND918 && !*sp.CDNSKEY {
			b.release918(p.Src, "spec.cdnskey", "cdnskey no", "BIND 9.18 always publishes CDNSKEY; remove cdnskey")
		}
		if rel != model.BIND918 {
			out = append(out, nc.S(nc.Kw("cdnskey"), yesNo(*sp.CDNSKEY)))
		}
	}
	if p.CDSDigests != nil {
		if rel == model.BIND918 && !slices.Equal(p.CDSDigests, []string{"sha-256"}) {
			b.release918(p.Src, "spec.cdsDigestTypes", "cds-digest-types", "BIND 9.18 publishes a SHA-256 CDS only; list sha-256 alone, or remove cdsDigestTypes")
		}
		if rel != model.BIND918 {
			var l []nc.Stmt
			for _, d := range p.CDSDigests {
				l = append(l, nc.S(nc.Str(d)))
			}
			out = append(out, nc.S(nc.Kw("cds-digest-types"), nc.L(l...)))
		}
	}
	return out
}

// release918 reports, once (from the primary's named.conf), a policy
// field a BIND 9.18 cluster cannot honour.
func (b *confBuilder) release918(src diag.Source, field, option, fix string) {
	if b.role != Primary {
		return
	}
	b.rs.Errorf(src, field, "cannot render %s for BindCluster %q: its image %q runs BIND 9.18, which has no such option (named-checkconf 9.18: \"unknown option\"); %s, or run BIND 9.20 (spec.image)", option, b.c.Name, b.c.Spec.Image, fix)
}

// checkDS is the parental-agents and checkds statements of a signed zone:
// the servers named asks for the zone's DS during a KSK rollover, by
// address, or itself when the parent zone is served by the same cluster.
func (b *confBuilder) checkDS(z *model.Zone) []nc.Stmt {
	p := z.DNSSEC
	sp := p.Spec
	rel, _ := b.c.BINDRelease()
	var out []nc.Stmt
	var agents []netip.AddrPort
	if pa := sp.ParentalAgents; pa != nil && pa.ParentInCluster {
		if parentZone(b.c, z.Name) == nil {
			if b.role == Primary {
				b.rs.Errorf(p.Src, "spec.parentalAgents.parentInCluster", "cannot ask the parent of zone %q for its DS in BindCluster %q: no primary BindZone of the cluster encloses it; list the parent's servers in spec.parentalAgents.addresses, or sign the zone with a policy without parentInCluster", bare(z.Name), b.c.Name)
			}
			return nil
		}
		// named asks itself: the parent is one of its own zones.
		agents = []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 0)}
	} else {
		agents = p.ParentalAgents
	}
	if len(agents) > 0 {
		var l []nc.Stmt
		for _, a := range agents {
			w := []nc.Word{nc.Kw(a.Addr().String())}
			if a.Port() != 0 {
				w = append(w, nc.Kw("port"), nc.Int(int64(a.Port())))
			}
			l = append(l, nc.S(w...))
		}
		out = append(out, nc.S(nc.Kw("parental-agents"), nc.L(l...)))
	}
	if sp.CheckDS != "" {
		// BIND 9.18 checks the parental agents when there are any and
		// nothing otherwise: explicit with agents, no without.
		same := sp.CheckDS == "explicit" && len(agents) > 0 || sp.CheckDS == "no" && len(agents) == 0
		switch {
		case rel != model.BIND918:
			out = append(out, nc.S(nc.Kw("checkds"), nc.Kw(sp.CheckDS)))
		case !same:
			b.release918(p.Src, "spec.checkDS", "checkds "+sp.CheckDS, "BIND 9.18 asks the parental agents when there are any and no server otherwise; remove checkDS")
		}
	}
	return out
}

// parentZone is the closest primary zone of c that encloses name (a
// strict ancestor), in any view, or nil.
func parentZone(c *model.Cluster, name string) *model.Zone {
	var best *model.Zone
	for _, v := range c.Views {
		for _, z := range v.Zones {
			if z.Spec.Type != v1alpha1.ZonePrimary || z.Name == name || !dns.IsSubDomain(z.Name, name) {
				continue
			}
			if best == nil || dns.CountLabel(z.Name) > dns.CountLabel(best.Name) {
				best = z
			}
		}
	}
	return best
}

// childDS are the DS records of c's signed zones whose parent zone is a
// primary zone of c, by the parent's name: the render writes them into the
// parent, so a resolver that trusts the parent validates the child with no
// step by hand, and a change of the child's keys changes the parent in the
// same render. Each has a SHA-256 digest, and SHA-384 too when the child's
// policy lists it in cdsDigestTypes; the TTL is the child policy's
// parent-ds-ttl (what BIND times the child's KSK rollover by), capped by
// the parent's max-zone-ttl when the parent is signed.
func childDS(c *model.Cluster, sets map[string]zoneKeySet) map[string][]dns.RR {
	out := map[string][]dns.RR{}
	for _, name := range slices.Sorted(maps.Keys(sets)) {
		parent := parentZone(c, name)
		if parent == nil {
			continue
		}
		set := sets[name]
		ttl := set.policy.DurationSeconds("parent-ds-ttl")
		if parent.DNSSEC != nil && parent.DNSSEC.MaxZoneTTL > 0 {
			ttl = min(ttl, parent.DNSSEC.MaxZoneTTL)
		}
		digests := []uint8{dns.SHA256}
		if slices.Contains(set.policy.CDSDigests, "sha-384") {
			digests = append(digests, dns.SHA384)
		}
		for _, k := range set.keys {
			if !k.SEP() {
				continue
			}
			for _, d := range digests {
				ds := k.DNSKEY.ToDS(d)
				ds.Hdr.Ttl = uint32(ttl)
				out[parent.Name] = append(out[parent.Name], ds)
			}
		}
		if set.zone != nil {
			out[parent.Name] = append(out[parent.Name], otherSignerDS(set.zone, digests, uint32(ttl))...)
		}
	}
	return out
}
