package model

import "git.unkin.net/unkin/bind-fn/api/v1alpha1"

// Defaults of spec.monitoring (the CRD carries the ranges; validate checks
// them for packages that never meet the API server).
const (
	DefaultSignatureExpiryDays = 7
	DefaultServfailPercent     = 5
)

// Monitoring is spec.monitoring with its defaults applied; the zero value
// (nothing rendered) when the spec has none.
func (c *Cluster) Monitoring() v1alpha1.MonitoringSpec {
	if c.Spec.Monitoring == nil {
		return v1alpha1.MonitoringSpec{}
	}
	m := *c.Spec.Monitoring.DeepCopy()
	if m.SignatureExpiryDays == 0 {
		m.SignatureExpiryDays = DefaultSignatureExpiryDays
	}
	if m.ServfailPercent == 0 {
		m.ServfailPercent = DefaultServfailPercent
	}
	return m
}

// SOARefreshMax is the longest SOA refresh of the cluster's zones (the
// default when it has none): how long a secondary may go without asking
// its primary for a zone's serial.
func (c *Cluster) SOARefreshMax() int32 {
	longest, any := int32(0), false
	for _, v := range c.Views {
		for _, z := range v.Zones {
			r := int32(DefaultRefresh)
			if z.Spec.SOA != nil && z.Spec.SOA.Refresh != nil {
				r = *z.Spec.SOA.Refresh
			}
			longest, any = max(longest, r), true
		}
	}
	if !any {
		return DefaultRefresh
	}
	return longest
}
