package multipod

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// The boundaries cluster (docs/design.md#boundaries): two views with their own catalogs
// and their own update keys, a zone narrowed by allowQuery inside the
// internal view (a catalog member but for its ACL), and a cluster
// allowQuery that leaves out loopback.
const boundariesYAML = `
apiVersion: bind.unkin.net/v1alpha1
kind: BindCluster
metadata: {name: fence, namespace: dns}
spec:
  replicas: 3
  storage: {size: 1Gi}
  allowQuery: ["192.0.2.0/24", "198.18.0.1", "198.18.7.0/24"]
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindView
metadata: {name: internal, namespace: dns}
spec: {clusterRef: fence, order: 1, matchClients: ["192.0.2.0/24", "198.18.7.0/24"]}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindView
metadata: {name: external, namespace: dns}
spec: {clusterRef: fence, order: 2}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindCatalogZone
metadata: {name: cat-int, namespace: dns}
spec: {clusterRef: fence, viewRef: internal, zoneName: catalog-int.invalid}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindCatalogZone
metadata: {name: cat-ext, namespace: dns}
spec: {clusterRef: fence, viewRef: external, zoneName: catalog-ext.invalid}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindTSIGKey
metadata: {name: int-ddns, namespace: dns}
spec: {clusterRef: fence}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindTSIGKey
metadata: {name: ext-ddns, namespace: dns}
spec: {clusterRef: fence}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: corp-int, namespace: dns}
spec:
  clusterRef: fence
  viewRef: internal
  zoneName: corp.example
  nameservers: [ns1.example.net.]
  dynamicUpdate: true
  updateKeyRef: int-ddns
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: corp-ext, namespace: dns}
spec:
  clusterRef: fence
  viewRef: external
  zoneName: corp.example
  nameservers: [ns1.example.net.]
  dynamicUpdate: true
  updateKeyRef: ext-ddns
---
apiVersion: bind.unkin.net/v1alpha1
kind: DNSRecord
metadata: {name: secret, namespace: dns}
spec: {zoneRef: corp-int, name: secret, type: A, values: ["10.9.9.9"]}
---
apiVersion: bind.unkin.net/v1alpha1
kind: DNSRecord
metadata: {name: www, namespace: dns}
spec: {zoneRef: corp-ext, name: www, type: A, values: ["198.51.100.80"]}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: hr, namespace: dns}
spec:
  clusterRef: fence
  viewRef: internal
  zoneName: hr.example
  nameservers: [ns1.example.net.]
  allowQuery: ["192.0.2.0/24"]
  records:
    - {name: payroll, type: A, values: ["10.7.7.7"]}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindTSIGKey
metadata: {name: partner-xfr, namespace: dns}
spec: {clusterRef: fence}
---
apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: shared-ext, namespace: dns}
spec:
  clusterRef: fence
  viewRef: external
  zoneName: shared.example
  nameservers: [ns1.example.net.]
  allowTransfer: ["key partner-xfr"]
  records:
    - {name: www, type: A, values: ["198.51.100.90"]}
`

func fenceIP(i int) string { return fmt.Sprintf("198.18.6.%d", 10+i) }

const fenceSvc = "198.18.1.30"

// TestBoundaries proves docs/design.md#boundaries on real named and the real agent, on
// every pod of a three-pod cluster:
//   - a zone's allowQuery reaches every server that serves it: a client of
//     the zone's view outside the zone's ACL is refused by the primary and
//     by both secondaries (the zone is a catalog member but for its ACL);
//   - internal-view records never reach the external view: each view's
//     dynamic zone has its own update key, and the agent's updates land in
//     their own view only, in both directions;
//   - the cluster allowQuery leaves out loopback, yet the agent applies the
//     DNSRecords (it is admitted by its keys), while an unsigned query from
//     loopback inside each pod, or from an address outside the list, is
//     still refused: nothing else gains access.
func TestBoundaries(t *testing.T) {
	agentBin := requirements(t)
	if !inLab() {
		enterOwnLab(t)
		return
	}
	if os.Getenv(envOwnLab) != t.Name() {
		t.Skip("runs in a lab of its own (a test of the lab that entered this one is running)")
	}
	lab := newLab(t, filepath.Dir(agentBin))
	r := renderInputs(t, Inputs(nil).Add(t, boundariesYAML), nil)
	c := lab.startCluster(r, "fence", podPlan{IP: fenceIP, PrimarySvc: fenceSvc, NetnsPrefix: "fence-"})
	defer c.stop()
	c.waitReady(hang)

	// DNSRecords added after the start reach named only by the agent's
	// UPDATEs (the first ones were in the seeded zone file).
	in := Inputs(nil).Add(t, boundariesYAML).Add(t, `
apiVersion: bind.unkin.net/v1alpha1
kind: DNSRecord
metadata: {name: added-int, namespace: dns}
spec: {zoneRef: corp-int, name: added, type: A, values: ["10.9.9.10"]}
---
apiVersion: bind.unkin.net/v1alpha1
kind: DNSRecord
metadata: {name: added-ext, namespace: dns}
spec: {zoneRef: corp-ext, name: added, type: A, values: ["198.51.100.81"]}
`)
	c.swap(renderInputs(t, in, r))

	office := q{src: officeClient}   // internal view, inside hr.example's ACL
	partner := q{src: partnerClient} // internal view, outside hr.example's ACL
	outside := q{src: labClient}     // external view
	for _, p := range c.Pods {
		ip := p.Net.IP
		steps := []struct {
			what string
			err  func() error
		}{
			{"the agent applied the internal DNSRecord (allowQuery without loopback)", func() error {
				return expect(ip, "secret.corp.example", dns.TypeA, office, dns.RcodeSuccess, []string{"10.9.9.9"})
			}},
			{"the agent applied the external DNSRecord", func() error {
				return expect(ip, "www.corp.example", dns.TypeA, outside, dns.RcodeSuccess, []string{"198.51.100.80"})
			}},
			{"the agent applied the internal DNSRecord added later, by UPDATE", func() error {
				return expect(ip, "added.corp.example", dns.TypeA, office, dns.RcodeSuccess, []string{"10.9.9.10"})
			}},
			{"the agent applied the external DNSRecord added later, by UPDATE", func() error {
				return expect(ip, "added.corp.example", dns.TypeA, outside, dns.RcodeSuccess, []string{"198.51.100.81"})
			}},
			{"hr.example answers its ACL", func() error {
				return expect(ip, "payroll.hr.example", dns.TypeA, office, dns.RcodeSuccess, []string{"10.7.7.7"})
			}},
		}
		for _, s := range steps {
			if err := eventually(hang, 200*time.Millisecond, s.err); err != nil {
				t.Errorf("%s: %s: %v", p.Name, s.what, err)
			}
		}
		// Now that every pod serves both views' records, the boundaries.
		for _, s := range []struct {
			what string
			err  error
		}{
			{"hr.example refuses a client of its view outside its ACL", expect(ip, "payroll.hr.example", dns.TypeA, partner, dns.RcodeRefused, nil)},
			{"the internal record is not in the external view", expect(ip, "secret.corp.example", dns.TypeA, outside, dns.RcodeNameError, nil)},
			{"the external record is not in the internal view", expect(ip, "www.corp.example", dns.TypeA, office, dns.RcodeNameError, nil)},
		} {
			if s.err != nil {
				t.Errorf("%s: %s: %v", p.Name, s.what, s.err)
			}
		}
		// Nothing else gains access: an unsigned query from loopback
		// inside the pod is refused, as the cluster's allowQuery says.
		if status := digIn(t, "fence-"+p.Name, "127.0.0.1", "www.corp.example"); status != "REFUSED" {
			t.Errorf("%s: an unsigned query from loopback inside the pod got %s, want REFUSED", p.Name, status)
		}
	}
	// A partner allowed to transfer an external-view zone by its key
	// transfers it from its own address, which the internal view matches
	// first: a request signed with the key finds the view that holds it
	// (issue 20). The same transfer unsigned is refused.
	partnerKey := c.tsig(t, "partner-xfr-tsig")
	if err := eventually(hang, 200*time.Millisecond, func() error {
		rrs, err := axfrFrom(partnerClient, c.Pods[0].Net.IP, "shared.example", partnerKey)
		if err != nil {
			return err
		}
		for _, rr := range rrs {
			if a, ok := rr.(*dns.A); ok && a.Hdr.Name == "www.shared.example." && a.A.String() == "198.51.100.90" {
				return nil
			}
		}
		return fmt.Errorf("www.shared.example A missing from %d records", len(rrs))
	}); err != nil {
		t.Errorf("the partner's key-signed AXFR of shared.example from %s (an internal-view address): %v", partnerClient, err)
	}
	if rrs, err := axfr(c.Pods[0].Net.IP, "shared.example", nil); err == nil {
		t.Errorf("an unsigned AXFR of shared.example got %d records, want a refusal", len(rrs))
	}
	// An address outside the cluster's allowQuery (another pod's) is refused.
	if status := digIn(t, "fence-"+c.Pods[1].Name, c.Pods[0].Net.IP, "www.corp.example"); status != "REFUSED" {
		t.Errorf("a query from pod 1's address to the primary got %s, want REFUSED", status)
	}
}

// envOwnLab names the test a lab was entered for (enterOwnLab).
const envOwnLab = "BINDFN_MULTIPOD_LAB_TEST"

// enterOwnLab is enterLab for this test alone: the test binary re-executed
// in a fresh lab (network, mount and PID namespaces) runs only t, so that
// its bridge and pods never meet TestLab's in one namespace.
func enterOwnLab(t *testing.T) {
	t.Helper()
	unshare := mustLook(t, "unshare")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-n", "-m", "-p", "--fork", "--kill-child=SIGKILL", "--mount-proc", "--propagation", "private", self}
	for _, a := range os.Args[1:] {
		if !strings.HasPrefix(a, "-test.run") {
			args = append(args, a)
		}
	}
	args = append(args, "-test.run=^"+t.Name()+"$")
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), envInLab+"=1", envOwnLab+"="+t.Name())
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		t.Fatalf("the lab (unshare -n -m -p) failed: %v (its output is above)", err)
	}
}

// digIn runs dig inside a pod's network namespace and returns the status
// of the answer (NOERROR, REFUSED, ...), or the failure.
func digIn(t *testing.T, netns, server, name string) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", netns, bindtools.BINDPath(t, "dig"), "+tries=1", "+time=2", "@"+server, name, "A").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("error %v: %s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if i := strings.Index(l, "status: "); i >= 0 {
			return strings.TrimSuffix(strings.Fields(l[i+len("status: "):])[0], ",")
		}
	}
	return "no status: " + string(out)
}
