package multipod

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

const edgeSvc = "198.18.43.10"

func edgeIP(i int) string { return fmt.Sprintf("198.18.42.%d", 10+i) }

// TestTLSReplicationLab: spec.replication.transferTLS. "tlsedge", a
// secondary cluster of tlslab (testdata/tls.yaml), transfers from
// tlslab's primary Service over TLS in strict mode (its own Secret's
// ca.crt, tlslab's primary Service name), TSIG signed with the key the
// two share. Port 53 from edge-0 to tlslab's pod 0 is rejected before
// any pod starts: every edge pod serves the zone and a change to it, and
// edge-0's named logs the transfers from port 853.
func TestTLSReplicationLab(t *testing.T) {
	agentBin := requirements(t)
	bindtools.RequireRelease(t, bindtools.BIND920)
	mustLook(t, "iptables")
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	ca := newLabCA(t)
	now := time.Now()
	cert, key := ca.issue(t, 100, now.Add(-time.Hour), now.Add(12*time.Hour))
	in := Inputs(nil).AddFile(t, "tls.yaml").Add(t, fmt.Sprintf(`apiVersion: bind.unkin.net/v1alpha1
kind: BindCluster
metadata: {name: tlsedge, namespace: dns}
spec:
  replicas: 2
  tls:
    secretName: tlsedge-tls
  replication:
    primaryClusterRef: tlslab
    primaryAddresses: [%q]
    notifyAddresses: [%q]
    transferKeyRef: tlslab-edge
    transferTLS: {mode: strict}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindTSIGKey
metadata: {name: tlslab-edge, namespace: dns}
spec: {}
`, tlsSvc, edgeSvc))
	r := renderInputs(t, in, nil)
	setSecrets := func(r *Rendered) {
		r.Clusters["tlslab"].Secrets[tlsSecret] = ca.secret(cert, key)
		r.Clusters["tlsedge"].Secrets["tlsedge-tls"] = ca.secret(cert, key)
	}
	setSecrets(r)
	block := []string{tlsIP(1), tlsIP(2), edgeIP(0), edgeSvc}
	primary := lab.startCluster(r, "tlslab", podPlan{IP: tlsIP, PrimarySvc: tlsSvc, NetnsPrefix: "tls-", Net: func(name, ip string, extra ...string) *Netns {
		n := lab.addNetns(name, ip, extra...)
		if ip == tlsIP(0) {
			for _, proto := range []string{"tcp", "udp"} {
				for _, src := range block {
					sh(t, "ip", "netns", "exec", n.Name, "iptables", "-A", "INPUT", "-p", proto, "-s", src, "--dport", "53", "-j", "REJECT")
				}
			}
		}
		return n
	}})
	t.Cleanup(primary.stop)
	edge := lab.startCluster(r, "tlsedge", podPlan{IP: edgeIP, PrimarySvc: edgeSvc, NetnsPrefix: "tls-"})
	t.Cleanup(edge.stop)
	primary.waitReady(hang)
	edge.waitReady(hang)

	in2 := in.Edit(t, "BindZone", "example-com", func(obj map[string]any) {
		spec(obj)["records"] = append(spec(obj)["records"].([]any), map[string]any{"name": "changed", "type": "A", "values": []any{"192.0.2.81"}})
	})
	r2 := renderInputs(t, in2, r)
	setSecrets(r2)
	primary.swap(r2)
	edge.swap(r2)
	for _, p := range append(append([]*Pod(nil), primary.Pods...), edge.Pods...) {
		for _, name := range []string{"www", "changed"} {
			if err := eventually(hang, 200*time.Millisecond, func() error {
				want := map[string]string{"www": "192.0.2.80", "changed": "192.0.2.81"}[name]
				return expect(p.Net.IP, name+".example.com", dns.TypeA, q{}, dns.RcodeSuccess, []string{want})
			}); err != nil {
				t.Errorf("%s: %s.example.com: %v", p.Name, name, err)
			}
		}
	}
	var xfr []string
	for _, l := range strings.Split(edge.Pods[0].Log.String(), "\n") {
		if strings.Contains(l, "example.com") && strings.Contains(l, tlsSvc+"#853") && strings.Contains(l, "Transfer completed") {
			xfr = append(xfr, l)
		}
	}
	if len(xfr) < 2 {
		t.Errorf("edge-0: %d completed transfers of example.com from %s#853 in named's log, want the first and the change's\n%s", len(xfr), tlsSvc, edge.Pods[0].Log.tail(80))
	}
	for _, l := range xfr {
		t.Logf("tlsedge-0: %s", l)
	}
	t.Logf("tlslab-0's INPUT rules:\n%s", sh(t, "ip", "netns", "exec", primary.Pods[0].Net.Name, "iptables", "-L", "INPUT", "-v", "-n", "-x"))
}
