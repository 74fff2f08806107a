package multipod

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

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
	c, r := ownLabCluster(t, "boundaries.yaml", "fence", podPlan{IP: fenceIP, PrimarySvc: fenceSvc, NetnsPrefix: "fence-"}, nil)
	if c == nil {
		return
	}

	// DNSRecords added after the start reach named only by the agent's
	// UPDATEs (the first ones were in the seeded zone file).
	in := fixtureInputs(t, "boundaries.yaml").AddFile(t, "boundaries-added.yaml")
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
		if status := digIn(t, p.Net.Name, "127.0.0.1", "www.corp.example"); status != "REFUSED" {
			t.Errorf("%s: an unsigned query from loopback inside the pod got %s, want REFUSED", p.Name, status)
		}
	}
	// A partner allowed to transfer an external-view zone by its key
	// transfers it from its own address, which the internal view matches
	// first: a request signed with the key finds the view that holds it
	// (docs/clients.md). The same transfer unsigned is refused.
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
	if status := digIn(t, c.Pods[1].Net.Name, c.Pods[0].Net.IP, "www.corp.example"); status != "REFUSED" {
		t.Errorf("a query from pod 1's address to the primary got %s, want REFUSED", status)
	}
}

// ownLabCluster starts the cluster name of the package in
// testdata/<fixture>, rendered, in a lab of its own (ownLab), and waits
// until every pod is ready; it stops when t ends. setup, when not nil,
// runs on the lab before the cluster starts. Outside that lab it runs the
// test in one and returns nil.
func ownLabCluster(t *testing.T, fixture, name string, plan podPlan, setup func(*Lab)) (*Cluster, *Rendered) {
	t.Helper()
	agentBin := requirements(t)
	if !ownLab(t) {
		return nil, nil
	}
	lab := newLab(t, filepath.Dir(agentBin))
	if setup != nil {
		setup(lab)
	}
	r := renderInputs(t, fixtureInputs(t, fixture), nil)
	c := lab.startCluster(r, name, plan)
	t.Cleanup(c.stop)
	c.waitReady(hang)
	return c, r
}

// fixtureInputs are the objects of testdata/<name>.
func fixtureInputs(t testing.TB, name string) Inputs {
	t.Helper()
	return Inputs(nil).AddFile(t, name)
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
