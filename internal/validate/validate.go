// Package validate holds the invariants every input must satisfy before
// anything is rendered: one check list, used by fn-validate, fn-render and
// the Crossplane function (through internal/pipeline).
//
// Where checks live (docs/design.md#checks). Every user value is parsed once, while
// internal/model resolves the objects, into typed values with BIND's own
// rules: durations (model.ParseDuration), DNSSEC keys and algorithms,
// address match lists and server entries (model.AML, model.Servers, read by
// internal/namedconf), extraOptions statements (model.ParseExtraOptions, the
// same lexer), zone types and required names; a bad value is a located
// result there and is left out. Record values are parsed, and checked
// against BIND's check-names and type rules, where zone files are built
// (internal/zonefile). This package adds the rules between values and
// objects (references, keys that select views, ACL loops, max-zone-ttl,
// name collisions, Kubernetes values through apimachinery's validation) and
// collects the zone builds' results. The renderer (internal/render) and the
// object builders (internal/objects) check nothing: they consume the typed
// values and cannot fail on user input. Each problem is reported once; the
// pipeline deduplicates nothing. docs/validation.md lists every check.
package validate

import (
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// Check runs every check over the decoded set and the resolved clusters.
// It reports every problem at once; it never renders objects. Problems the
// model already reported (dangling references, duplicate zones, views and
// catalogs) are not reported again. prev is the previous output (serials),
// zones this run's built zones, shared with the renderer; either may be nil.
func Check(set *model.Set, clusters []*model.Cluster, prev *prior.Previous, zones *zonefile.Cache) diag.Results {
	var rs diag.Results
	if set == nil {
		return rs
	}
	for _, f := range []func(*model.Set) diag.Results{
		checkDuplicateObjects,
		checkRefKinds,
		checkSecretTemplates,
		checkObjectNames,
		checkNamespaces,
	} {
		rs = append(rs, f(set)...)
	}
	for _, c := range clusters {
		rs = append(rs, checkCluster(set, c, prev, zones)...)
	}
	rs = append(rs, checkObjectIDs(clusters)...)
	rs = append(rs, checkACLLoops(clusters)...)
	rs = append(rs, checkTopology(clusters)...)
	rs = append(rs, checkDNSSECPolicies(clusters)...)
	rs = append(rs, checkExternalTemplates(clusters)...)
	return rs
}

// clusterChecks each look at one resolved cluster.
var clusterChecks = []func(*model.Cluster) diag.Results{
	checkObjects,
	checkClusterSpec,
	checkGeneratedNames,
	checkKeyRefsInLists,
	checkViewKeys,
	checkZoneNames,
	checkViewNameSpace,
	checkZoneTypes,
	checkRecordsOnNonPrimary,
	checkShadowedRecords,
	checkDynamic,
	checkSOATimers,
	checkMaxZoneTTL,
	checkZoneFiles,
	checkPolicyApex,
	checkTransferRequestSize,
	checkViews,
	checkSecondaryPaths,
	checkRuntimeAddresses,
	checkNames,
}

func checkCluster(set *model.Set, c *model.Cluster, prev *prior.Previous, zones *zonefile.Cache) diag.Results {
	var rs diag.Results
	rs = append(rs, checkScopedNames(set, c)...)
	for _, f := range clusterChecks {
		rs = append(rs, f(c)...)
	}
	rs = append(rs, checkZoneData(c, prev, zones)...)
	return rs
}
