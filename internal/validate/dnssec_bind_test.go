package validate_test

import (
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestDNSSECPolicyBIND: fn-validate accepts a dnssec-policy exactly when
// named-checkconf (the host's BIND) accepts the same policy: key lifetimes
// against the rollover time BIND computes from the policy's TTLs, safeties
// and delays, signatures-refresh against 90 % of both validities, the
// validity against BIND's 12-hour jitter, algorithm aliases, RSA sizes
// (docs/validation.md: dnssec-policy relations). Cases where
// bind-fn follows BIND 9.20 and 9.18 accepts are marked: fn-validate
// refuses them whichever BIND runs.
func TestDNSSECPolicyBIND(t *testing.T) {
	bindtools.RequireBIND(t)
	for name, tc := range map[string]struct {
		reason string
		spec   string // BindDNSSECPolicy spec fields (flow YAML, without braces)
		bind   string // the same policy's body in named.conf
		// only920: fn-validate refuses as BIND 9.20 does; 9.18 accepts.
		only920 bool
	}{
		"ksk-at-rollover": {
			reason: "KSK lifetime equal to BIND's default KSK rollover time (parent-ds-ttl 1d + retire-safety 1h + parent-propagation-delay 1h)",
			spec:   "keys: [{role: ksk, lifetime: P1DT2H}, {role: zsk}]",
			bind:   "keys { ksk lifetime P1DT2H algorithm ecdsap256sha256; zsk lifetime unlimited algorithm ecdsap256sha256; };",
		},
		"ksk-past-rollover": {
			reason: "one second longer",
			spec:   "keys: [{role: ksk, lifetime: P1DT2H0M1S}, {role: zsk}]",
			bind:   "keys { ksk lifetime P1DT2H0M1S algorithm ecdsap256sha256; zsk lifetime unlimited algorithm ecdsap256sha256; };",
		},
		"zsk-at-rollover": {
			reason: "ZSK lifetime equal to validity - refresh + max-zone-ttl + retire-safety + zone-propagation-delay at BIND's defaults",
			spec:   "keys: [{role: ksk}, {role: zsk, lifetime: P10DT1H5M}]",
			bind:   "keys { ksk lifetime unlimited algorithm ecdsap256sha256; zsk lifetime P10DT1H5M algorithm ecdsap256sha256; };",
		},
		"zsk-past-rollover": {
			reason: "one second longer",
			spec:   "keys: [{role: ksk}, {role: zsk, lifetime: P10DT1H5M1S}]",
			bind:   "keys { ksk lifetime unlimited algorithm ecdsap256sha256; zsk lifetime P10DT1H5M1S algorithm ecdsap256sha256; };",
		},
		"csk-max-zone-ttl": {
			reason: "a CSK of 11 days with maxZoneTTL P2D: the ZSK rollover takes 11d 1h 5m",
			spec:   "keys: [{role: csk, lifetime: P11D}], maxZoneTTL: P2D",
			bind:   "keys { csk lifetime P11D algorithm ecdsap256sha256; }; max-zone-ttl P2D;",
		},
		"csk-long-enough": {
			reason: "a CSK of 12 days with maxZoneTTL P2D",
			spec:   "keys: [{role: csk, lifetime: P12D}], maxZoneTTL: P2D",
			bind:   "keys { csk lifetime P12D algorithm ecdsap256sha256; }; max-zone-ttl P2D;",
		},
		"ksk-parent-ds-ttl": {
			reason: "a KSK of 30 days with parentDSTTL P30D",
			spec:   "keys: [{role: ksk, lifetime: P30D}, {role: zsk}], parentDSTTL: P30D",
			bind:   "keys { ksk lifetime P30D algorithm ecdsap256sha256; zsk lifetime unlimited algorithm ecdsap256sha256; }; parent-ds-ttl P30D;",
		},
		"refresh-over-90": {
			reason: "signatures-refresh P13D is over 90 % of the default validity P14D",
			spec:   "signaturesRefresh: P13D",
			bind:   "signatures-refresh P13D;",
		},
		"refresh-under-90": {
			reason: "P12D is under 90 % of P14D",
			spec:   "signaturesRefresh: P12D",
			bind:   "signatures-refresh P12D;",
		},
		"refresh-over-90-dnskey": {
			reason: "signatures-validity-dnskey P5D against the default refresh P5D",
			spec:   "signaturesValidityDNSKEY: P5D",
			bind:   "signatures-validity-dnskey P5D;",
		},
		"validity-under-jitter": {
			reason: "signatures-validity PT11H is shorter than BIND's signatures-jitter PT12H",
			spec:   "signaturesValidity: PT11H, signaturesRefresh: PT1H",
			bind:   "signatures-validity PT11H; signatures-refresh PT1H;",
		},
		"alias-ecdsa256": {
			reason: "BIND reads ECDSA256 as ECDSAP256SHA256",
			spec:   "keys: [{role: csk, algorithm: ecdsa256}]",
			bind:   "keys { csk lifetime unlimited algorithm ecdsa256; };",
		},
		"alias-ecdsa384-roles": {
			reason: "ecdsa384 and ecdsap384sha384 are one algorithm: a KSK and a ZSK of it",
			spec:   "keys: [{role: ksk, algorithm: ecdsa384}, {role: zsk, algorithm: ECDSAP384SHA384}]",
			bind:   "keys { ksk lifetime unlimited algorithm ecdsa384; zsk lifetime unlimited algorithm ecdsap384sha384; };",
		},
		"rsa-1024": {
			reason: "BIND's smallest RSA key",
			spec:   "keys: [{role: csk, algorithm: rsasha256, bits: 1024}]",
			bind:   "keys { csk lifetime unlimited algorithm rsasha256 1024; };",
		},
		"rsa-512": {
			reason: "under BIND's smallest RSA key",
			spec:   "keys: [{role: csk, algorithm: rsasha256, bits: 512}]",
			bind:   "keys { csk lifetime unlimited algorithm rsasha256 512; };",
		},
		"nsec3-iterations-0": {
			reason: "RFC 9276",
			spec:   "nsec3: {iterations: 0}",
			bind:   "nsec3param iterations 0 optout no salt-length 0;",
		},
		"nsec3-iterations-1": {
			reason:  "9.20 refuses iterations other than 0; 9.18 warns",
			spec:    "nsec3: {iterations: 1}",
			bind:    "nsec3param iterations 1 optout no salt-length 0;",
			only920: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			pkg := testutil.Lines(
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindCluster", "metadata: {name: dns, namespace: dns}",
				"spec: {replicas: 1, storage: {size: 1Gi}}", "---",
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindDNSSECPolicy", "metadata: {name: p, namespace: dns}",
				"spec: {"+tc.spec+"}", "---",
				"apiVersion: bind.unkin.net/v1alpha1", "kind: BindZone", "metadata: {name: z, namespace: dns}",
				"spec: {clusterRef: dns, zoneName: example.com, nameservers: [ns1.example.net.], dnssecPolicyRef: p}",
			)
			fn := verdict(t, pkg)
			bind, out := checkconfAccepts(t, `dnssec-policy "p" { `+tc.bind+` };
zone "example.com" { type primary; file "/dev/null"; dnssec-policy "p"; inline-signing yes; };
`)
			if tc.only920 && bind {
				// BIND 9.18 accepts what bind-fn refuses for 9.20
				// (docs/validation.md); 9.20 refuses it, as fn-validate.
				if fn {
					t.Errorf("%s: fn-validate accepted it; it must refuse it as BIND 9.20 does", tc.reason)
				}
				return
			}
			if fn != bind {
				t.Errorf("%s: fn-validate accepted=%v, named-checkconf accepted=%v (%s)", tc.reason, fn, bind, strings.TrimSpace(out))
			}
		})
	}
}
