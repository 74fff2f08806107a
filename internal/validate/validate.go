// Package validate holds the invariants every input must satisfy before
// anything is rendered. One check list, used by fn-validate, fn-render and the
// Crossplane function. Every check is a small function over the decoded set
// or one resolved cluster that returns located results; Check runs them all.
package validate

import (
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/render"
)

// Check runs every check over the decoded set and the resolved clusters.
// It reports every problem at once; it never renders objects. Problems the
// model already reported (dangling references, duplicate zones, views and
// catalogs) are not reported again.
func Check(set *model.Set, clusters []*model.Cluster, prev *render.Previous) diag.Results {
	var rs diag.Results
	if set == nil {
		return rs
	}
	for _, f := range []func(*model.Set) diag.Results{
		checkDuplicateObjects,
		checkRefKinds,
		checkSecretTemplates,
		checkObjectNames,
	} {
		rs = append(rs, f(set)...)
	}
	for _, c := range clusters {
		rs = append(rs, checkCluster(set, c, prev, rs.HasErrors())...)
	}
	rs = append(rs, checkObjectIDs(clusters)...)
	return rs
}

// clusterChecks each look at one resolved cluster.
var clusterChecks = []func(*model.Cluster) diag.Results{
	checkObjects,
	checkClusterSpec,
	checkGeneratedNames,
	checkKeyRefsInLists,
	checkACLLoops,
	checkViewKeys,
	checkZoneNames,
	checkZoneTypes,
	checkRecordsOnNonPrimary,
	checkDynamic,
	checkSOATimers,
	checkDNSSECPolicies,
	checkMaxZoneTTL,
	checkZoneFiles,
	checkViews,
	checkSecondaryPaths,
	checkRuntimeAddresses,
	checkNames,
}

func checkCluster(set *model.Set, c *model.Cluster, prev *render.Previous, located bool) diag.Results {
	var rs diag.Results
	rs = append(rs, checkScopedNames(set, c)...)
	for _, f := range clusterChecks {
		rs = append(rs, f(c)...)
	}
	rs = append(rs, checkZoneData(c, prev)...)
	// What the named.conf writer reports (address match lists, server
	// entries, extraOptions, durations): identical to the render's results.
	// A bare "cannot render named.conf" (a string no located check caught)
	// is only kept when no located check found an error.
	located = located || rs.HasErrors()
	for _, r := range render.CheckConf(c) {
		if located && r.Field == "" && strings.HasPrefix(r.Message, "cannot render named.conf") {
			continue
		}
		rs = append(rs, r)
	}
	return rs
}
