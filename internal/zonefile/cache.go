package zonefile

import (
	"runtime"
	"sort"
	"sync"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

type builtZone struct {
	zone *Zone
	rs   diag.Results
}

// Cache is one run's built zones: Build done once per zone.
// The validator (which must report every zone's problems even when another
// check fails) and the renderer both need every zone built, and building
// is the dominant cost of a large package (BENCHMARKS.md); the pipeline
// hands both the same cache, which lives for one run. A nil cache builds
// without remembering. A zone must not change during the run, and a built
// zone must not be modified.
type Cache struct {
	built map[*model.Zone]builtZone
}

// Build is Build(z), built on the first call and remembered.
func (zc *Cache) Build(z *model.Zone) (*Zone, diag.Results) {
	if zc == nil {
		return Build(z)
	}
	if b, ok := zc.built[z]; ok {
		return b.zone, b.rs
	}
	zone, rs := Build(z)
	if zc.built == nil {
		zc.built = map[*model.Zone]builtZone{}
	}
	zc.built[z] = builtZone{zone: zone, rs: rs}
	return zone, rs
}

// BuildAll builds every primary zone of clusters into the cache at once,
// spread over GOMAXPROCS goroutines: zones are independent, and the
// validator and renderer then find them built. Results are kept per zone,
// so the callers' order (and output) stays what it is without this.
func (zc *Cache) BuildAll(clusters []*model.Cluster) {
	if zc == nil {
		return
	}
	var zones []*model.Zone
	for _, c := range clusters {
		for _, v := range c.Views {
			for _, z := range v.Zones {
				if z.Spec.Type == v1alpha1.ZonePrimary {
					if _, ok := zc.built[z]; !ok {
						zones = append(zones, z)
					}
				}
			}
		}
	}
	if len(zones) == 0 {
		return
	}
	built := make([]builtZone, len(zones))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(zones)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				z, rs := Build(zones[i])
				built[i] = builtZone{zone: z, rs: rs}
			}
		}()
	}
	// Largest first, so one big zone does not finish last alone.
	order := make([]int, len(zones))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(zones[order[a]].RRsets) > len(zones[order[b]].RRsets) })
	for _, i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	if zc.built == nil {
		zc.built = map[*model.Zone]builtZone{}
	}
	for i, z := range zones {
		zc.built[z] = built[i]
	}
}

// Forget drops a built zone from the cache once its last user (the
// renderer) is done with it, so a large package does not hold every zone's
// RRs and its text at once.
func (zc *Cache) Forget(z *model.Zone) {
	if zc != nil {
		delete(zc.built, z)
	}
}
