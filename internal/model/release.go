package model

import (
	"regexp"
	"strings"
)

// The BIND release branches bind-fn renders for.
const (
	BIND918 = "9.18"
	BIND920 = "9.20"
)

// imageRelease finds a release branch at the start of an image tag:
// bind9:9.20.30-1-deb13u1, internetsystemsconsortium/bind9:9.18,
// ubuntu/bind9:9.18-22.04_beta.
var imageRelease = regexp.MustCompile(`^v?(9\.[0-9]+)(?:[.\-_].*)?$`)

// BINDRelease is the BIND release branch the cluster's named runs, read
// from the tag of spec.image (bind9:9.20.30-1-deb13u1 is 9.20), and
// whether the tag names one. An image without a release in its tag (a
// digest alone, latest) is taken as BIND 9.20, the release bind-fn ships;
// the options only 9.20 reads are rendered for it.
func (c *Cluster) BINDRelease() (string, bool) {
	img := c.Spec.Image
	if i := strings.Index(img, "@"); i >= 0 {
		img = img[:i]
	}
	slash := strings.LastIndex(img, "/")
	colon := strings.LastIndex(img, ":")
	if colon <= slash {
		return BIND920, false
	}
	m := imageRelease.FindStringSubmatch(img[colon+1:])
	if m == nil {
		return BIND920, false
	}
	return m[1], true
}
