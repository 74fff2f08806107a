package importer

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// signedKeys carries a signed zone's existing DNSSEC keys: the parent's DS
// matches them, so for an import they are the only right keys. They are
// read from the zone's key-directory (the zone's, else options', else
// named's directory) as K<zone>.+<alg>+<tag>.key/.private/.state; their
// DNSKEYs become BindCluster spec.dnssec.publicKeys (importExisting) and
// their files the Secret <cluster>-dnssec, written apart from the
// package like the TSIG keys. Keys that cannot be read are a loss: the
// render would sign with keys no DS matches.
func (im *importer) signedKeys(s namedconf.Located, zone string, opts map[string]namedconf.Located) {
	dir := im.keyDir
	where := s
	if kd := opts["key-directory"]; kd.Name() != "" {
		dir, where = kd.Arg(1), kd
	}
	if dir == "" {
		dir = im.zoneDir
	}
	if !filepath.IsAbs(dir) && im.zoneDir != "" {
		dir = filepath.Join(im.zoneDir, dir)
	}
	if im.opt.Glob == nil {
		im.lose(where, fmt.Sprintf("the DNSSEC keys of zone %s are not read (no directory listing): the render would sign with new keys, which no DS at the parent matches", zone))
		return
	}
	// BIND names key files after the zone as written, in lower case here.
	pattern := filepath.Join(dir, "K"+strings.ToLower(strings.TrimSuffix(zone, "."))+".+*.key")
	keyFiles, err := im.opt.Glob(pattern)
	if err != nil || len(keyFiles) == 0 {
		im.lose(where, fmt.Sprintf("no DNSSEC keys of zone %s in %s (%s): the render would sign with new keys, which no DS at the parent matches; import where the keys are readable", zone, dir, errText(err, "no "+filepath.Base(pattern))))
		return
	}
	sort.Strings(keyFiles)
	files := map[string][]byte{}
	for _, kf := range keyFiles {
		stem := strings.TrimSuffix(kf, dnssec.SuffixKey)
		for _, suf := range []string{dnssec.SuffixKey, dnssec.SuffixPrivate, dnssec.SuffixState} {
			b, err := im.opt.Read(stem + suf)
			if err != nil {
				if suf != dnssec.SuffixState {
					im.lose(where, fmt.Sprintf("cannot read DNSSEC key file %s%s of zone %s: %v; the render would sign with new keys, which no DS at the parent matches", stem, suf, zone, err))
				}
				continue
			}
			files[stem+suf] = b
		}
	}
	keys, probs := dnssec.Parse(files)
	for _, p := range probs {
		im.lose(where, fmt.Sprintf("cannot use DNSSEC key %s of zone %s: %v", p.File, zone, p.Err))
	}
	if len(keys) == 0 {
		return
	}
	sp := &im.cluster.Spec
	if sp.DNSSEC == nil {
		sp.DNSSEC = &v1alpha1.DNSSECKeysSpec{ImportExisting: true}
	}
	if im.dnssecSecret == nil {
		im.dnssecSecret = &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: layout.DNSSECSecretName(im.opt.Cluster), Namespace: im.opt.Namespace},
			Type:       corev1.SecretTypeOpaque,
			StringData: map[string]string{},
		}
		im.res.Secrets = append(im.res.Secrets, im.dnssecSecret)
	}
	for _, k := range keys {
		rr := *k.DNSKEY
		rr.Hdr.Name = k.Zone()
		sp.DNSSEC.PublicKeys = append(sp.DNSSEC.PublicKeys, rr.String())
		// BIND's own files, under the Secret's names for them.
		for _, suf := range []string{dnssec.SuffixKey, dnssec.SuffixPrivate, dnssec.SuffixState} {
			if b, ok := files[k.Stem+suf]; ok {
				im.dnssecSecret.StringData[k.SecretKey(suf)] = string(b)
			}
		}
	}
	im.replaced(where, fmt.Sprintf("zone %s's %d DNSSEC key(s) are carried (spec.dnssec.publicKeys; the key files in Secret %s, beside the package)", zone, len(keys), layout.DNSSECSecretName(im.opt.Cluster)))
}

// signedSerial carries the serial a signed zone serves. BIND raises the
// signed version's serial above the file's at each re-sign, and the
// secondaries hold that one: the render must start at it (its own signed
// serial then only rises), or they never transfer again. It is read from
// <file>.signed with its journal; when that cannot be read, a loss.
func (im *importer) signedSerial(z *v1alpha1.BindZone, f namedconf.Located) {
	if f.Name() == "" || z.Spec.SOA == nil || z.Spec.SOA.Serial == nil {
		return
	}
	signed := im.zonePath(f.Arg(1)) + ".signed"
	if im.opt.SignedSerial == nil || im.opt.Exists == nil || !im.opt.Exists(signed) {
		im.lose(f, fmt.Sprintf("the signed serial of zone %s is not read (no %s, or no named-checkzone): the render starts at the file's serial %d, which may be below the one its secondaries hold; set spec.soa.serial to the served serial", z.Spec.ZoneName, signed, *z.Spec.SOA.Serial))
		return
	}
	n, err := im.opt.SignedSerial(z.Spec.ZoneName, signed)
	if err != nil {
		im.lose(f, fmt.Sprintf("cannot read the signed serial of zone %s from %s: %v; set spec.soa.serial to the served serial", z.Spec.ZoneName, signed, err))
		return
	}
	if int32(n-*z.Spec.SOA.Serial) > 0 {
		im.replaced(f, fmt.Sprintf("zone %s: the serial is the signed version's (%d, from %s), above the file's (%d)", z.Spec.ZoneName, n, signed, *z.Spec.SOA.Serial))
		z.Spec.SOA.Serial = &n
	}
}

func errText(err error, def string) string {
	if err != nil {
		return err.Error()
	}
	return def
}
