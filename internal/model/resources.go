package model

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// Memory figures of the default resources (docs/resources.md, where each is
// explained; BENCHMARKS.md "Memory of named and the agent" holds the
// measurements they come from).
const (
	mi = 1 << 20

	// BaseMemory is what the named container holds with (almost) no
	// zones: named's own structures and thread arenas plus the agent.
	BaseMemory int64 = 96 * mi
	// RecordMemory is named's cost per record of a loaded zone, rounded
	// up from the 50,000-record measurement.
	RecordMemory int64 = 512
	// SignedFactor multiplies the records of a zone named signs: the
	// unsigned copy kept for inline signing, RRSIGs and NSEC records.
	SignedFactor = 3
	// CacheAllowance is what the default request holds for each view
	// that recurses, above the base and the zones.
	CacheAllowance int64 = 128 * mi
	// MinCacheSize is the smallest max-cache-size a recursive view is
	// given: a smaller limit is refused.
	MinCacheSize int64 = 8 * mi

	// DefaultCPURequest of the named container; no CPU limit by default
	// (docs/resources.md: a CFS quota throttles a DNS server's answers).
	DefaultCPURequest = "100m"
)

// The install-agent init container only copies a binary.
var (
	defaultInitRequests = corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("10m"),
		corev1.ResourceMemory: resource.MustParse("32Mi"),
	}
	defaultInitLimits = corev1.ResourceList{
		corev1.ResourceMemory: resource.MustParse("64Mi"),
	}
)

// Resources are the cluster's container resources with defaults applied,
// and the cache size they leave named.
type Resources struct {
	// Named is the named container's (the agent runs named in it).
	Named corev1.ResourceRequirements
	// InstallAgent is the init container's.
	InstallAgent corev1.ResourceRequirements
	// Records is how many records named loads (signed zones counted
	// SignedFactor times), which the default memory request follows.
	Records int64
	// RecursiveViews is how many views recurse (each has its own cache).
	RecursiveViews int
	// MaxCacheSize is the max-cache-size bind-fn renders into options, in
	// bytes: 0 when no view recurses or extraOptions sets it.
	MaxCacheSize int64
}

// MemoryRequest is the default memory request of the named container for a
// server loading records records with views recursive views: BaseMemory +
// RecordMemory per record + CacheAllowance per recursive view, rounded up
// to a MiB.
func MemoryRequest(records int64, views int) int64 {
	b := BaseMemory + records*RecordMemory + int64(views)*CacheAllowance
	return (b + mi - 1) / mi * mi
}

// CacheSize is the max-cache-size of each recursive view under a memory
// limit: half of what the limit leaves once the base and the zones (twice:
// a reload or a transfer holds the old and the new version) are set
// aside, shared by the recursive views, rounded down to a MiB. The other
// half is for what the cache's limit does not cover (BIND starts cleaning
// at 7/8 of it and may overshoot; recursive clients, fetches and sockets).
func CacheSize(limit, records int64, views int) int64 {
	if views < 1 {
		return 0
	}
	free := limit - BaseMemory - 2*records*RecordMemory
	if free <= 0 {
		return 0
	}
	return free / 2 / int64(views) / mi * mi
}

// recordCount is how many records named loads for the cluster: every
// record of its primary zones and response policies, per view (a zone in
// two views is loaded twice), a signed zone's SignedFactor times. Zones
// transferred from outside the package count nothing: their size is not in
// the input.
func recordCount(c *Cluster) int64 {
	var n int64
	for _, v := range c.Views {
		for _, z := range v.Zones {
			if z.Spec.Type != v1alpha1.ZonePrimary {
				continue
			}
			var zn int64 = 2 // the SOA and an apex NS
			for _, rs := range z.RRsets {
				zn += int64(len(rs.Values))
			}
			if z.DNSSEC != nil {
				zn *= SignedFactor
			}
			n += zn
		}
		for _, p := range v.Policies {
			n += 2 + 2*int64(len(p.Spec.Rules)) // a wildcard rule is two names at most
		}
	}
	return n
}

// recursiveViews is how many of the cluster's views recurse.
func recursiveViews(c *Cluster) int {
	n := 0
	for _, v := range c.Views {
		rec := c.Spec.Mode == v1alpha1.ModeResolver
		if c.HasViews && v.Recursion != nil {
			rec = *v.Recursion
		}
		if rec {
			n++
		}
	}
	return n
}

// ResolveResources sets c.Resources: the default resources applied under
// the user's, field by field, and the cache size. It checks the user's: a
// request above its limit, a limit that leaves recursive views no cache,
// and max-cache-size in extraOptions (which takes precedence over the
// computed one) larger than the memory limit are located errors. Build
// calls it once the cluster's zones are known.
func ResolveResources(c *Cluster, rs *diag.Results) {
	r := Resources{Records: recordCount(c), RecursiveViews: recursiveViews(c)}
	user := c.Spec.Resources
	named := *user.DeepCopy()
	if named.Requests == nil {
		named.Requests = corev1.ResourceList{}
	}
	if named.Limits == nil {
		named.Limits = corev1.ResourceList{}
	}
	if _, ok := named.Requests[corev1.ResourceCPU]; !ok {
		if lim, ok := named.Limits[corev1.ResourceCPU]; ok && lim.Cmp(resource.MustParse(DefaultCPURequest)) < 0 {
			named.Requests[corev1.ResourceCPU] = lim.DeepCopy()
		} else {
			named.Requests[corev1.ResourceCPU] = resource.MustParse(DefaultCPURequest)
		}
	}
	reqMem, userReq := named.Requests[corev1.ResourceMemory]
	limMem, userLim := named.Limits[corev1.ResourceMemory]
	switch {
	case !userReq && !userLim:
		reqMem = *resource.NewQuantity(MemoryRequest(r.Records, r.RecursiveViews), resource.BinarySI)
		limMem = *resource.NewQuantity(2*reqMem.Value(), resource.BinarySI)
	case !userLim:
		limMem = *resource.NewQuantity(2*reqMem.Value(), resource.BinarySI)
	case !userReq:
		def := MemoryRequest(r.Records, r.RecursiveViews)
		reqMem = *resource.NewQuantity(min(def, limMem.Value()), resource.BinarySI)
	}
	named.Requests[corev1.ResourceMemory] = reqMem
	named.Limits[corev1.ResourceMemory] = limMem
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := user.Requests[res]
		lim, okLim := user.Limits[res]
		if okReq && okLim && req.Cmp(lim) > 0 {
			rs.Errorf(c.Src, "spec.resources.requests."+string(res), "request %s is more than the limit %s (spec.resources.limits.%s): Kubernetes refuses the pod; raise the limit or lower the request", req.String(), lim.String(), res)
		}
	}
	if c.Spec.Agent != nil && c.Spec.Agent.Resources != nil {
		u := c.Spec.Agent.Resources
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, okReq := u.Requests[res]
			lim, okLim := u.Limits[res]
			if okReq && okLim && req.Cmp(lim) > 0 {
				rs.Errorf(c.Src, "spec.agent.resources.requests."+string(res), "request %s is more than the limit %s (spec.agent.resources.limits.%s): Kubernetes refuses the pod; raise the limit or lower the request", req.String(), lim.String(), res)
			}
		}
	}
	r.Named = named
	r.InstallAgent = initResources(c)
	resolveCache(c, &r, rs)
	c.Resources = r
}

// resolveCache sets r.MaxCacheSize, or checks the user's max-cache-size.
func resolveCache(c *Cluster, r *Resources, rs *diag.Results) {
	limit := r.Named.Limits[corev1.ResourceMemory]
	if i, ok := c.extraIndex["max-cache-size"]; ok {
		field := fmt.Sprintf("spec.extraOptions[%d]", i)
		var s nc.Stmt
		for _, st := range c.ExtraOptions {
			if st.Name() == "max-cache-size" {
				s = st
			}
		}
		size, err := cacheBytes(s.Arg(1))
		if err != nil {
			rs.Errorf(c.Src, field, "cannot set max-cache-size %q: %v", s.Arg(1), err)
			return
		}
		views := max(r.RecursiveViews, 1)
		if size*int64(views) > limit.Value() {
			rs.Errorf(c.Src, field, "cannot set max-cache-size %s: %d recursive view(s) with a cache of that size each hold more than the memory limit %s (spec.resources.limits.memory), and the kernel kills named at the limit; lower it (bind-fn's default would be %dm) or raise the limit",
				s.Arg(1), views, limit.String(), max(CacheSize(limit.Value(), r.Records, views), MinCacheSize)/mi)
		}
		return
	}
	if r.RecursiveViews == 0 {
		return
	}
	size := CacheSize(limit.Value(), r.Records, r.RecursiveViews)
	if size < MinCacheSize {
		need := BaseMemory + 2*r.Records*RecordMemory + 2*MinCacheSize*int64(r.RecursiveViews)
		rs.Errorf(c.Src, "spec.resources.limits.memory", "memory limit %s leaves %d recursive view(s) less than %dMi of cache each after named's base (%dMi) and its zones (%d records, counted twice for reloads); raise it to at least %dMi, or set max-cache-size in spec.extraOptions",
			limit.String(), r.RecursiveViews, MinCacheSize/mi, BaseMemory/mi, r.Records, (need+mi-1)/mi)
		return
	}
	r.MaxCacheSize = size
}

// cacheBytes reads a max-cache-size value (already shaped by
// ParseExtraOptions) as bytes. Percentages, unlimited, default and 0 are
// refused: each leaves the cache bounded by the node's memory, not the
// container's limit.
func cacheBytes(v string) (int64, error) {
	v = strings.ToLower(v)
	switch {
	case strings.HasSuffix(v, "%"):
		return 0, fmt.Errorf("a percentage is of the memory named sees, which in a container is the node's, not the pod's limit; give a size (64m)")
	case v == "unlimited", v == "default":
		return 0, fmt.Errorf("%s bounds the cache by the node's memory, not the pod's limit, and the kernel kills named at the limit; give a size (64m)", v)
	}
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "k"):
		mult, v = 1<<10, strings.TrimSuffix(v, "k")
	case strings.HasSuffix(v, "m"):
		mult, v = 1<<20, strings.TrimSuffix(v, "m")
	case strings.HasSuffix(v, "g"):
		mult, v = 1<<30, strings.TrimSuffix(v, "g")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("not a size: write a number with an optional unit (64m)")
	}
	if n == 0 {
		return 0, fmt.Errorf("0 means no limit to BIND, and the kernel kills named at the pod's limit; give a size (64m)")
	}
	return n * mult, nil
}

// initResources are the install-agent container's: spec.agent.resources
// over the defaults, field by field.
func initResources(c *Cluster) corev1.ResourceRequirements {
	out := corev1.ResourceRequirements{Requests: defaultInitRequests.DeepCopy(), Limits: defaultInitLimits.DeepCopy()}
	if c.Spec.Agent == nil || c.Spec.Agent.Resources == nil {
		return out
	}
	u := c.Spec.Agent.Resources
	for k, v := range u.Requests {
		out.Requests[k] = v.DeepCopy()
		// A request above the default limit raises the limit with it.
		if lim, ok := out.Limits[k]; ok && v.Cmp(lim) > 0 {
			out.Limits[k] = v.DeepCopy()
		}
	}
	for k, v := range u.Limits {
		out.Limits[k] = v.DeepCopy()
		// A limit below the default request lowers the request with it.
		if req, ok := out.Requests[k]; ok && req.Cmp(v) > 0 {
			if _, set := u.Requests[k]; !set {
				out.Requests[k] = v.DeepCopy()
			}
		}
	}
	return out
}
