// Command coredns is CoreDNS (github.com/coredns/coredns, pinned in go.mod)
// with the plugins a cluster's DNS needs, for the kubelet cluster of
// hack/k8s-cluster.sh: hack/install-k8s.sh --node builds it into bin/coredns.
// The full plugin set pulls every cloud provider's SDK; these are the
// plugins of kubeadm's default Corefile.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() { coremain.Run() }
