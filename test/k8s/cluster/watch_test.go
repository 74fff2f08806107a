//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// eventCount counts the watch events the API server sends for the objects
// an XR composed (label crossplane.io/composite), by object, type and the
// field manager of the write: what a composite's watches see, each event
// once. Crossplane's circuit breaker counts what its own watches deliver.
type eventCount struct {
	mu     sync.Mutex
	events map[string]int // "Kind/name TYPE manager"
	total  int
}

// watchComposed starts watches on every kind function-bind composes in ns
// and counts the events of composite's objects until the test ends.
func watchComposed(t *testing.T, ctx context.Context, ns, composite string) *eventCount {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	ec := &eventCount{events: map[string]int{}}
	opts := metav1.ListOptions{LabelSelector: "crossplane.io/composite=" + composite}
	for kind, w := range map[string]func() (watch.Interface, error){
		"ConfigMap":           func() (watch.Interface, error) { return cs.CoreV1().ConfigMaps(ns).Watch(ctx, opts) },
		"Secret":              func() (watch.Interface, error) { return cs.CoreV1().Secrets(ns).Watch(ctx, opts) },
		"Service":             func() (watch.Interface, error) { return cs.CoreV1().Services(ns).Watch(ctx, opts) },
		"StatefulSet":         func() (watch.Interface, error) { return cs.AppsV1().StatefulSets(ns).Watch(ctx, opts) },
		"PodDisruptionBudget": func() (watch.Interface, error) { return cs.PolicyV1().PodDisruptionBudgets(ns).Watch(ctx, opts) },
	} {
		wi, err := w()
		if err != nil {
			t.Fatalf("watch %s: %v", kind, err)
		}
		go func() {
			defer wi.Stop()
			for ev := range wi.ResultChan() {
				o, err := meta.Accessor(ev.Object)
				if err != nil {
					continue
				}
				manager := ""
				var latest metav1.Time
				for _, f := range o.GetManagedFields() {
					if f.Time != nil && !f.Time.Before(&latest) {
						latest, manager = *f.Time, f.Manager
						if f.Subresource != "" {
							manager += "/" + f.Subresource
						}
					}
				}
				ec.mu.Lock()
				ec.events[fmt.Sprintf("%s/%s %s %s", kind, o.GetName(), ev.Type, manager)]++
				ec.total++
				ec.mu.Unlock()
			}
		}()
	}
	return ec
}

// report is the count so far, one "N× object TYPE manager" per line.
func (ec *eventCount) report() (int, string) {
	ec.mu.Lock()
	defer ec.mu.Unlock()
	var lines []string
	for k, n := range ec.events {
		lines = append(lines, fmt.Sprintf("%3d× %s", n, k))
	}
	sort.Strings(lines)
	return ec.total, strings.Join(lines, "\n")
}
