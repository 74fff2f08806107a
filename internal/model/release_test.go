package model

import "testing"

func TestBINDRelease(t *testing.T) {
	cases := map[string]struct {
		reason string
		image  string
		want   string
		known  bool
	}{
		"default":      {reason: "bind-fn's own image names its Debian version", image: DefaultImage, want: BIND920, known: true},
		"isc 9.18":     {reason: "ISC's image tagged by branch", image: "internetsystemsconsortium/bind9:9.18", want: BIND918, known: true},
		"patch":        {reason: "a full version", image: "registry.example:5000/bind9:9.18.28", want: BIND918, known: true},
		"ubuntu":       {reason: "a suffix after the branch", image: "ubuntu/bind9:9.18-22.04_beta", want: BIND918, known: true},
		"port only":    {reason: "a registry port is no tag", image: "registry.example:5000/bind9", want: BIND920},
		"digest":       {reason: "a digest alone names no release: 9.20, what bind-fn ships", image: "registry.example/bind9@sha256:" + "ab", want: BIND920},
		"tag+digest":   {reason: "the tag before the digest counts", image: "r.example/bind9:9.18.1@sha256:ab", want: BIND918, known: true},
		"latest":       {reason: "latest names no release", image: "bind9:latest", want: BIND920},
		"not a branch": {reason: "9.2 is no branch bind-fn knows, but it is what the tag says", image: "bind9:9.2", want: "9.2", known: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &Cluster{}
			c.Spec.Image = tc.image
			got, known := c.BINDRelease()
			if got != tc.want || known != tc.known {
				t.Errorf("%s: BINDRelease(%q) = %q, %v; want %q, %v", tc.reason, tc.image, got, known, tc.want, tc.known)
			}
		})
	}
}
