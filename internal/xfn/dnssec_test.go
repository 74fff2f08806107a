package xfn_test

import (
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/xfn"
	"git.unkin.net/unkin/bind-fn/internal/xfn/input/v1alpha1"
)

// TestStatusDNSSEC: a composite whose cluster signs a zone shows the zone's
// DS record in status.bind.dnssecDS, and the Secret to back up.
func TestStatusDNSSEC(t *testing.T) {
	items, err := testutil.DecodeItems("in.yaml", []byte(`
apiVersion: bind.unkin.net/v1alpha1
kind: BindCluster
metadata: {name: sec, namespace: dns}
spec: {}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindDNSSECPolicy
metadata: {name: pol, namespace: dns}
spec: {}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: z, namespace: dns}
spec:
  clusterRef: sec
  zoneName: signed.example
  nameservers: [ns1.example.net.]
  dnssecPolicyRef: pol
`))
	if err != nil {
		t.Fatal(err)
	}
	objs, rs := pipeline.Run(pipeline.Input{Items: items}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		t.Fatal(rs)
	}
	ours, err := xfn.Composed(objs, nil, xfn.Options{Wrapping: v1alpha1.WrappingNone}, "xr")
	if err != nil {
		t.Fatal(err)
	}
	st := xfn.Status(xfn.Target{Name: "sec", Namespace: "dns"}, ours)
	ds, _ := st["dnssecDS"].([]any)
	if len(ds) != 1 || !strings.HasPrefix(ds[0].(string), "signed.example. 3600 IN DS ") {
		t.Errorf("status.bind.dnssecDS = %v, want the zone's one DS record", st["dnssecDS"])
	}
	if st["dnssecKeysSecret"] != "sec-dnssec" {
		t.Errorf("status.bind.dnssecKeysSecret = %v, want sec-dnssec", st["dnssecKeysSecret"])
	}
}
