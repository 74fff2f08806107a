package verify

import "testing"

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
