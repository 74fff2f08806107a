package serversconf

import (
	"net"
	"path/filepath"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

func TestServersConf(t *testing.T) {
	got, err := Write([]List{
		{Name: "bind-fn-secondaries", Key: "xfr", IPs: []net.IP{net.ParseIP("10.0.0.9"), net.ParseIP("fd00::1"), net.ParseIP("10.0.0.10"), net.ParseIP("10.0.0.9")}},
		{Name: "bind-fn-primary", Key: "xfr", Port: 5353, IPs: []net.IP{net.ParseIP("10.1.0.1")}},
		{Name: "empty", Key: "xfr"},
		{Name: `evil"; }; controls {`, IPs: []net.IP{net.ParseIP("10.2.0.1")}},
		// The primary pod's own address: in the ACL (its NOTIFYs leave from
		// it), never a primaries list.
		{Name: layout.PrimaryPodList, ACLOnly: true, IPs: []net.IP{net.ParseIP("10.3.0.1")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "servers.conf"), []byte(got))
}
