//go:build tools

// Package tools pins the Kubernetes components the control-plane tests run
// (hack/install-k8s.sh builds them from this module). k8s.io/kubernetes is not
// a library: its staging modules are replaced with the published v0.34.x.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
