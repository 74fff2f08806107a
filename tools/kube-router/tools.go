//go:build tools

// Package tools pins kube-router, whose network policy controller enforces
// the rendered NetworkPolicy in the kubelet cluster test (test/k8s/cluster):
// it filters with iptables and ipset, which this kernel has (SIG Network's
// kube-network-policies needs nftables' queue expression, which it lacks).
package tools

import _ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
