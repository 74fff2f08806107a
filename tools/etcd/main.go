// Command etcd is etcd's server (go.etcd.io/etcd/server/v3, pinned in go.mod)
// for the control-plane tests: hack/install-k8s.sh builds it into bin/etcd.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
