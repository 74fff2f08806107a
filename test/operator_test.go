package test

import (
	"crypto/rand"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/test/differential"
)

// operatorPackage is test/testdata/operator: manifests written for the old
// bind-operator, every field name and default of its history (the seeds)
// and of the API (docs/design.md#inputs), status included, two clusters sharing a key.
func operatorPackage(t *testing.T) []model.Item {
	return testutil.ReadItems(t, filepath.Join(bindtools.RepoRoot(t), "test", "testdata", "operator"))
}

func renderOperator(t *testing.T, items []model.Item, prev []render.Object) ([]render.Object, diag.Results) {
	t.Helper()
	var prevObjs []prior.Object
	for _, o := range prev {
		if s, ok := o.Obj.(*corev1.Secret); ok {
			p := prior.Object{Kind: "Secret", Data: s.Data}
			p.Src.Ref.Namespace, p.Src.Ref.Name = s.Namespace, s.Name
			prevObjs = append(prevObjs, p)
		}
	}
	// Real randomness: a shared key must agree everywhere because the
	// render makes it once, not because the random source repeats itself.
	objs, rs := pipeline.Run(pipeline.Input{Items: items, Previous: prevObjs}, render.Options{Rand: rand.Reader})
	if rs.HasErrors() {
		t.Fatalf("the old operator's manifests do not render:\n%v", rs)
	}
	return objs, rs
}

// TestOperatorManifestsLoadInBIND: the package renders (the only warnings
// are the nameserver-less zones'), and both roles of every cluster pass
// named-checkconf -z, every zone loaded, with the pod's paths.
func TestOperatorManifestsLoadInBIND(t *testing.T) {
	bindtools.RequireBIND(t)
	objs, rs := renderOperator(t, operatorPackage(t), nil)
	var warned []string
	for _, r := range rs {
		if r.Severity == diag.Warning {
			warned = append(warned, r.Source.Ref.Kind+"/"+r.Source.Ref.Name+" "+r.Field)
		}
	}
	sort.Strings(warned)
	// The internal view recurses and the manifests set no allowRecursion:
	// it recurses for localnets and localhost only, and says so
	// (docs/validation.md, "Recursion is never open by default").
	want := []string{"BindCluster/auth spec.allowRecursion", "BindZone/lab-internal spec.nameservers", "BindZone/main-unkin-net spec.nameservers", "BindZone/office-internal spec.nameservers"}
	if diff := cmp.Diff(want, warned); diff != "" {
		t.Errorf("warnings (-want +got):\n%s\nall results:\n%v", diff, rs)
	}
	clusters := testutil.Clusters(t, objs)
	if len(clusters) != 2 {
		t.Fatalf("rendered %d clusters, want auth and resolver", len(clusters))
	}
	for name, c := range clusters {
		root := t.TempDir()
		testutil.LayPod(t, root, c)
		for _, f := range []string{layout.NamedConfPrimary, layout.NamedConfSecondary} {
			out, err := bindtools.NamedCheckconf(t, root, layout.ConfigFile(f))
			if err != nil {
				t.Errorf("cluster %s %s: named-checkconf -z failed: %v\n%s", name, f, err, out)
				continue
			}
			t.Logf("cluster %s %s: named-checkconf -z: %s", name, f, strings.ReplaceAll(strings.TrimSpace(out), "\n", "; "))
		}
	}
}

// TestOperatorDefaults: what the old operator's manifests leave out gets
// the documented defaults.
func TestOperatorDefaults(t *testing.T) {
	objs, _ := renderOperator(t, operatorPackage(t), nil)
	clusters := testutil.Clusters(t, objs)
	auth, res := clusters["auth"], clusters["resolver"]

	// BindTSIGKey: algorithm hmac-sha256, keyName = the object name,
	// Secret <name>-tsig with algorithm, keyName, secret and key.conf.
	shared := secretOf(t, objs, "transfer-key-tsig")
	for k, want := range map[string]string{"algorithm": "hmac-sha256", "keyName": "transfer-key"} {
		if got := string(shared.Data[k]); got != want {
			t.Errorf("Secret transfer-key-tsig %s = %q, want the default %q", k, got, want)
		}
	}
	for _, k := range []string{"secret", "key.conf"} {
		if len(shared.Data[k]) == 0 {
			t.Errorf("Secret transfer-key-tsig has no %q", k)
		}
	}
	// keyName and secretName as written; the template's labels and annotations stamped.
	ed := secretOf(t, objs, "externaldns-tsig")
	if string(ed.Data["keyName"]) != "externaldns" || ed.Labels["team"] != "platform" ||
		ed.Annotations["reflector.v1.k8s.emberstack.com/reflection-auto-namespaces"] != "externaldns" {
		t.Errorf("Secret externaldns-tsig: keyName %q labels %v annotations %v", ed.Data["keyName"], ed.Labels, ed.Annotations)
	}
	// BindCluster: the default image.
	for _, ctr := range res.StatefulSet.Spec.Template.Spec.Containers {
		if ctr.Name == "named" && ctr.Image != model.DefaultImage {
			t.Errorf("resolver's named image %q, want the default %q", ctr.Image, model.DefaultImage)
		}
	}
	// importExisting: no Secret rendered for it.
	for _, o := range objs {
		if s, ok := o.Obj.(*corev1.Secret); ok && s.Name == "partner-tsig" {
			t.Error("an importExisting key's Secret was rendered")
		}
	}

	// A zone without nameservers: the apex NS (and MNAME) is the serve
	// Service's cluster DNS name; SOA timers default to 300 60 1209600 60.
	zone := zoneFile(t, auth, "main.unkin.net")
	for _, want := range []string{
		"main.unkin.net. 3600 IN NS auth.dns.svc.cluster.local.",
		"main.unkin.net. 3600 IN SOA auth.dns.svc.cluster.local. hostmaster.main.unkin.net. 1 300 60 1209600 60",
	} {
		if !strings.Contains(zone, want) {
			t.Errorf("zone main.unkin.net lacks %q:\n%s", want, zone)
		}
	}
	if z := zoneFile(t, res, "lab.internal"); !strings.Contains(z, "IN NS resolver.dns.svc.cluster.local.") {
		t.Errorf("zone lab.internal of the resolver cluster: want NS resolver.dns.svc.cluster.local.:\n%s", z)
	}
	// The update key transfers its dynamic zone, beside the transfer key
	// and spec.allowTransfer; a static zone's transfers stay as they were.
	conf := auth.NamedConf(t, layout.NamedConfPrimary)
	for _, want := range []string{
		`allow-transfer { key "transfer-key"; key "externaldns"; key "partner-key"; };`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("named.conf.primary lacks %s:\n%s", want, conf)
		}
	}
	var xfr []string
	for _, l := range strings.Split(conf, "\n") {
		if strings.Contains(l, "allow-transfer") && strings.Contains(l, `key "externaldns";`) {
			xfr = append(xfr, strings.TrimSpace(l))
		}
	}
	if len(xfr) != 1 { // main.unkin.net's only
		t.Errorf("the update key transfers %d zones, want 1 (its dynamic zone): %q", len(xfr), xfr)
	}

	// spec.clusterDomain moves the default NS; spec.updateKeyTransfer: false
	// takes the update key's transfer right away.
	edited := editItem(t, operatorPackage(t), "BindCluster", "auth", func(spec map[string]any) { spec["clusterDomain"] = "k8s.unkin.net" })
	edited = editItem(t, edited, "BindZone", "main-unkin-net", func(spec map[string]any) { spec["updateKeyTransfer"] = false })
	objs2, _ := renderOperator(t, edited, nil)
	auth2 := testutil.Clusters(t, objs2)["auth"]
	if z := zoneFile(t, auth2, "main.unkin.net"); !strings.Contains(z, "IN NS auth.dns.svc.k8s.unkin.net.") {
		t.Errorf("with clusterDomain k8s.unkin.net: want NS auth.dns.svc.k8s.unkin.net.:\n%s", z)
	}
	conf2 := auth2.NamedConf(t, layout.NamedConfPrimary)
	if !strings.Contains(conf2, `allow-transfer { key "transfer-key"; key "partner-key"; };`) {
		t.Errorf("updateKeyTransfer false: the update key still transfers:\n%s", conf2)
	}
}

// TestOperatorSharedKeyFirstRender: a BindTSIGKey without clusterRef used
// by two clusters has one secret — in its Secret and in both clusters'
// keys Secrets — from the first render, and keeps it on the next.
func TestOperatorSharedKeyFirstRender(t *testing.T) {
	objs, _ := renderOperator(t, operatorPackage(t), nil)
	first := sharedSecrets(t, objs)
	objs2, _ := renderOperator(t, operatorPackage(t), objs)
	second := sharedSecrets(t, objs2)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("the second render changed the shared key (-first +second):\n%s", diff)
	}
}

var secretRE = regexp.MustCompile(`secret\s+"([^"]+)"`)

// sharedSecrets is the transfer-key secret as each place holds it; it
// fails unless all agree.
func sharedSecrets(t *testing.T, objs []render.Object) map[string]string {
	t.Helper()
	out := map[string]string{"Secret transfer-key-tsig": string(secretOf(t, objs, "transfer-key-tsig").Data["secret"])}
	for _, cl := range []string{"auth", "resolver"} {
		ks := secretOf(t, objs, layout.KeysSecretName(cl))
		m := secretRE.FindStringSubmatch(string(ks.Data["transfer-key-tsig.conf"]))
		if m == nil {
			t.Fatalf("keys Secret of %s has no transfer-key-tsig.conf with a secret: %v", cl, keysOf(ks))
		}
		out["keys Secret of "+cl] = m[1]
	}
	var vals []string
	for _, v := range out {
		vals = append(vals, v)
	}
	for _, v := range vals[1:] {
		if v != vals[0] {
			t.Errorf("the shared key has different secrets: %v", out)
			break
		}
	}
	return out
}

func keysOf(s *corev1.Secret) []string {
	var out []string
	for k := range s.Data {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func secretOf(t *testing.T, objs []render.Object, name string) *corev1.Secret {
	t.Helper()
	for _, o := range objs {
		if s, ok := o.Obj.(*corev1.Secret); ok && s.Name == name {
			return s
		}
	}
	t.Fatalf("no Secret %q rendered", name)
	return nil
}

// zoneFile is a rendered zone file's text, found by its SOA owner.
func zoneFile(t *testing.T, c *testutil.Cluster, zone string) string {
	t.Helper()
	for _, cm := range c.ConfigMaps {
		for _, v := range cm.Data {
			if strings.Contains(v, "$ORIGIN "+dns.Fqdn(zone)+"\n") {
				return v
			}
		}
	}
	t.Fatalf("no zone file for %s in cluster %s", zone, c.Name)
	return ""
}

// editItem changes the spec of the object kind/name.
func editItem(t *testing.T, items []model.Item, kind, name string, fn func(spec map[string]any)) []model.Item {
	t.Helper()
	return testutil.EditItem(t, items, kind, name, func(obj map[string]any) {
		spec, _ := obj["spec"].(map[string]any)
		fn(spec)
	})
}

// TestOperatorManifestsServe: named itself — the release under test
// (BINDFN_BIND, 9.20 unless set; make test runs 9.18 too) — loads both
// roles of every cluster the old operator's manifests render, and a
// secondary joined to the primary transfers every zone (the differential
// test's named and transfer stages).
func TestOperatorManifestsServe(t *testing.T) {
	bindtools.RequireRoot(t)
	objs, _ := renderOperator(t, operatorPackage(t), nil)
	for _, f := range differential.BINDCheck(t, objs, differential.Options{Named: true, Transfer: true}) {
		t.Errorf("%s", f)
	}
}
