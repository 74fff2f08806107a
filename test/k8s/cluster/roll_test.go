//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
)

// rollingUpgrade: a change to the pod template (what a new BIND or agent
// image is) rolls the StatefulSet one pod at a time while a query loop
// asks the serve Service, from a new source port each time and from one
// socket (queryLoop). Asserted: not one query fails, never more than
// one pod is unready at a time (maxUnavailable 1, the PDB's budget), and
// every pod ends on the new revision, Ready. The roll's time is reported.
func rollingUpgrade(t *testing.T, ctx context.Context) {
	pdb, err := cs.PolicyV1().PodDisruptionBudgets("dns").Get(ctx, "auth", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the PodDisruptionBudget: %v", err)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget auth: maxUnavailable %v, want 1", pdb.Spec.MaxUnavailable)
	}
	stop := queryLoop()
	t0 := time.Now()
	kubectl(t, "-n", "dns", "patch", "statefulset", "auth", "--type=merge", "-p",
		fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"bind.unkin.net/roll-test":%q}}}}}`, t0.UTC().Format(time.RFC3339Nano)))
	maxUnready := 0
	deadline := t0.Add(2 * controlplane.Hang)
	for {
		sts, err := cs.AppsV1().StatefulSets("dns").Get(ctx, "auth", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods := authPods(t, ctx)
		unready, onNew := 3-len(pods), 0
		for _, p := range pods {
			ready := false
			for _, c := range p.Status.Conditions {
				ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
			}
			if !ready || p.DeletionTimestamp != nil {
				unready++
			}
			if p.Labels["controller-revision-hash"] == sts.Status.UpdateRevision && ready && p.DeletionTimestamp == nil {
				onNew++
			}
		}
		maxUnready = max(maxUnready, unready)
		if sts.Status.ObservedGeneration >= sts.Generation && onNew == 3 && sts.Status.UpdatedReplicas == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the roll did not finish in %s: %d of 3 pods Ready on revision %s", 2*controlplane.Hang, onNew, sts.Status.UpdateRevision)
		}
		time.Sleep(200 * time.Millisecond)
	}
	took := time.Since(t0)
	// A while longer: the last pod's endpoints settle.
	time.Sleep(3 * time.Second)
	r := stop()
	queries, failed, partial := r.queries, r.failed, r.partial
	if len(failed) > 0 {
		t.Errorf("%d of %d queries through the serve Service failed during the roll: %s", len(failed), queries, strings.Join(failed[:min(10, len(failed))], "; "))
	}
	if len(partial) > 0 {
		t.Logf("%d of %d answers during the roll were the CNAME alone (queryLoop): %s", len(partial), queries, strings.Join(partial[:min(10, len(partial))], "; "))
	}
	if len(r.retried) > 0 {
		t.Logf("%d one-socket queries during the roll were answered by their retry: %s", len(r.retried), strings.Join(r.retried[:min(10, len(r.retried))], "; "))
	}
	if maxUnready > 1 {
		t.Errorf("%d pods were unready at once during the roll, want at most 1", maxUnready)
	}
	for _, p := range authPods(t, ctx) {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount != 0 {
				t.Errorf("%s/%s restarted %d times", p.Name, c.Name, c.RestartCount)
			}
		}
	}
	t.Logf("the pod template change rolled 3 pods in %.1f s, at most %d unready at once; %d queries through the serve Service, %d failed", took.Seconds(), maxUnready, queries, len(failed))
}
