// Command pause is the pod sandbox's process (what registry.k8s.io/pause
// does): it waits for SIGTERM or SIGINT. Built into a local image for the
// kubelet cluster, since no registry is reachable.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
