package objects

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// PodDisruptionBudget lets voluntary disruptions (node drains) take one
// server at a time: maxUnavailable 1, so with two or more replicas some
// server always answers.
//
// With one replica it is still maxUnavailable 1, i.e. no protection: a budget
// cannot keep a single pod up without blocking every node drain for ever
// (minAvailable 1), which cluster operators rightly treat as a bug. It is
// rendered all the same so the object set does not change shape with
// replicas, and scaling to two makes it real.
//
// unhealthyPodEvictionPolicy AlwaysAllow: a crash-looping or not-ready pod
// serves nothing, so evicting it must never be blocked by the budget.
//
// With a hidden primary, pod 0 is never ready (see ServeService), so it would
// use up the whole budget and block every drain; the selector leaves it out
// (statefulset.kubernetes.io/pod-name NotIn [<cluster>-0]). The hidden
// primary serves no client, so its eviction only pauses updates and
// transfers for the time it takes to reschedule.
func PodDisruptionBudget(c *model.Cluster) *policyv1.PodDisruptionBudget {
	sel := &metav1.LabelSelector{MatchLabels: SelectorLabels(c)}
	if c.Spec.HiddenPrimary {
		sel.MatchExpressions = []metav1.LabelSelectorRequirement{{
			Key:      LabelPodName,
			Operator: metav1.LabelSelectorOpNotIn,
			Values:   []string{PodName(c, 0)},
		}}
	}
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: objectMeta(c, layout.PDBName(c.Name), ComponentServer, nil, nil),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable:             ptr(intstr.FromInt32(1)),
			Selector:                   sel,
			UnhealthyPodEvictionPolicy: ptr(policyv1.AlwaysAllow),
		},
	}
}
