package differential

import "testing"

// TestSignature: names, numbers, paths and zones are blanked, so one
// defect in two packages is one signature.
func TestSignature(t *testing.T) {
	for name, tc := range map[string]struct {
		d      Divergence
		want   string
		reason string
	}{
		"zone load": {
			d:      Divergence{Kind: AcceptedRefused, Stage: StageCheckconf, Detail: "named-checkconf dns primary: zone lll.example/IN: loading from master file /var/lib/bind/primary/db.x failed: obsolete"},
			want:   "accepted-but-BIND-refuses | named-checkconf | zone Z loading from master file P failed: obsolete",
			reason: "zone name and file are per package",
		},
		"warning skipped": {
			d:      Divergence{Kind: AcceptedRefused, Stage: StageCheckconf, Detail: "named-checkconf ns primary: /etc/x:86: 'inline-signing' default changed to 'yes' in 9.20.\n/etc/x:38: dnssec-policy: algorithm 13 requires both KSK and ZSK roles"},
			want:   "accepted-but-BIND-refuses | named-checkconf | P:N: dnssec-policy: algorithm N requires both KSK and ZSK roles",
			reason: "a warning line is not the refusal",
		},
		"owner name": {
			d:      Divergence{Kind: AcceptedRefused, Stage: StageCheckconf, Detail: `named-checkconf dns primary: /etc/x:7: host\@office.2.0.192.in-addr.arpa: bad owner name (check-names)`},
			want:   "accepted-but-BIND-refuses | named-checkconf | P:N: NAME: bad owner name (check-names)",
			reason: "the owner is per package",
		},
		"validator": {
			d:      Divergence{Kind: RefusedLoads, Stage: "fn-validate", Detail: `error: BindCluster dns/x (pkg.yaml, document 4) spec.extraOptions[0]: option "a" is bad`},
			want:   "refused-but-BIND-loads | fn-validate | error: BindCluster spec.extraOptions: option Q is bad",
			reason: "file index and list index are per package",
		},
	} {
		if got := tc.d.Signature(); got != tc.want {
			t.Errorf("%s (%s):\n got %s\nwant %s", name, tc.reason, got, tc.want)
		}
	}
}
