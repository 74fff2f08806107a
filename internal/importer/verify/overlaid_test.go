package verify

import (
	"net/netip"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
)

// TestOverlaid: a directory at or below one the verify has laid an overlay
// over gets no second overlay (a stacked one can exceed the kernel's depth).
func TestOverlaid(t *testing.T) {
	v := &verifier{overlays: []string{"/run", "/etc/bind"}}
	for _, c := range []struct {
		dir  string
		want bool
		why  string
	}{
		{"/run/named", true, "below an overlay"},
		{"/run", true, "the overlay itself"},
		{"/run/", true, "cleaned first"},
		{"/runner", false, "a sibling sharing the prefix"},
		{"/etc", false, "above an overlay"},
		{"/etc/bind/zones", true, "below the second"},
		{"/var/cache/bind", false, "elsewhere"},
	} {
		if got := v.overlaid(c.dir); got != c.want {
			t.Errorf("overlaid(%q) = %v, want %v (%s)", c.dir, got, c.want, c.why)
		}
	}
	// An overlay over / (a config in /) covers every directory.
	if root := (&verifier{overlays: []string{"/"}}); !root.overlaid("/var/cache/bind") {
		t.Error(`overlaid("/var/cache/bind") under an overlay over / = false, want true`)
	}
}

// TestClientsSkipLoopback: an ACL that lists the loopback address (and
// other addresses no query on the bridge can come from) before a network
// gets a client from the network, not 127.0.0.1: a query from 127.0.0.1
// to the server's bridge address fails with "invalid argument", which the
// verify once blamed on the original server.
func TestClientsSkipLoopback(t *testing.T) {
	for name, c := range map[string]struct {
		reason string
		lan    []string
		want   string
	}{
		"loopback first": {"127.0.0.1 is the first host of nothing usable", []string{"127.0.0.1", "localhost", "192.168.50.0/24"}, "192.168.50.1"},
		"loopback net":   {"127.0.0.0/8 names the same loopback addresses", []string{"127.0.0.0/8", "10.10.0.0/16"}, "10.10.0.1"},
		"link-local":     {"169.254.0.0/16 cannot leave its link", []string{"169.254.0.0/16", "10.20.0.0/16"}, "10.20.0.1"},
		"only loopback":  {"no usable address: the view is reached by key, or not at all", []string{"127.0.0.1"}, ""},
	} {
		views := []*v1alpha1.BindView{
			{ObjectMeta: metav1.ObjectMeta{Name: "internal"}, Spec: v1alpha1.BindViewSpec{Order: 1, MatchClients: []string{"lan"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "external"}, Spec: v1alpha1.BindViewSpec{Order: 2, MatchClients: []string{"any"}}},
		}
		acls := []*v1alpha1.BindACL{{ObjectMeta: metav1.ObjectMeta{Name: "lan"}, Spec: v1alpha1.BindACLSpec{Addresses: c.lan}}}
		got := clients(views, acls, nil)
		if got[0].src != c.want {
			t.Errorf("%s: the internal view's client is %q, want %q (%s)", name, got[0].src, c.want, c.reason)
		}
		for _, a := range got[0].all {
			if ip := netip.MustParseAddr(a); ip.IsLoopback() || ip.IsLinkLocalUnicast() {
				t.Errorf("%s: candidate %s cannot reach the server", name, a)
			}
		}
	}
}
