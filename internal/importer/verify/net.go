package verify

import (
	"fmt"
	"os/exec"
	"strings"
)

// The verify network, inside the private network namespace the caller
// entered: a bridge holding the clients' addresses (one per view) and the
// NOTIFY listeners, and one namespace per server on it.
const (
	bridge  = "bfv0"
	gateway = "100.127.255.254"
	origIP  = "100.127.255.1"
	rendIP  = "100.127.255.2"
	prefix  = 24
	// netnsDir is where ip netns keeps its names.
	netnsDir = "/run/netns"
)

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (v *verifier) setupBridge() error {
	// Namespace names live in /run/netns, which the host and every other
	// verify share: a tmpfs of this mount namespace's own keeps them apart.
	if err := v.privateDir(netnsDir); err != nil {
		return err
	}
	if err := run("mount", "-t", "tmpfs", "-o", "size=1m", "netns", netnsDir); err != nil {
		return err
	}
	v.mounts = append(v.mounts, netnsDir)
	for _, c := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", bridge, "type", "bridge"},
		{"addr", "add", fmt.Sprintf("%s/%d", gateway, prefix), "dev", bridge},
		{"link", "set", bridge, "up"},
	} {
		if err := run("ip", c...); err != nil {
			return err
		}
	}
	return nil
}

// addNetns makes a server's namespace with eth0 on the bridge at ip.
func addNetns(name, veth, ip string) error {
	for _, c := range [][]string{
		{"netns", "add", name},
		{"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", name},
		{"link", "set", veth, "master", bridge, "up"},
		{"-n", name, "link", "set", "lo", "up"},
		{"-n", name, "addr", "add", fmt.Sprintf("%s/%d", ip, prefix), "dev", "eth0"},
		{"-n", name, "link", "set", "eth0", "up"},
		{"-n", name, "route", "add", "default", "via", gateway},
	} {
		if err := run("ip", c...); err != nil {
			return err
		}
	}
	return nil
}

// addAddr puts an address (a view's client, a NOTIFY target) on the bridge.
// An address already there (a client that is also a NOTIFY target) is
// fine.
func addAddr(ip string) error {
	err := run("ip", "addr", "add", ip+"/32", "dev", bridge)
	if err != nil && (strings.Contains(err.Error(), "File exists") || strings.Contains(err.Error(), "already assigned")) {
		return nil
	}
	return err
}
