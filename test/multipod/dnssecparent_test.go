package multipod

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// The parent cluster: a signed parent zone and its signed child in one
// cluster (testdata/dnssec-parent.yaml). The render writes the child's DS
// into the parent; the child publishes CDS (SHA-256 and SHA-384; 9.18:
// SHA-256) and
// CDNSKEY, and names the cluster itself as its parental agent.
const (
	parCluster = "par"
	parSvc     = "198.18.1.50"
	parParent  = "parent.example"
	parChild   = "child.parent.example"
)

func parIP(i int) string { return fmt.Sprintf("198.18.20.%d", 10+i) }

// TestDNSSECParent: on real named, every pod serves the DS the render
// wrote into the parent, and delv, trusting only the parent's key (its DS
// as a static anchor), validates a name of the child through that DS; the
// child serves CDS and CDNSKEY matching its KSK as the policy asks; a
// wrong parent anchor fails (the control).
func TestDNSSECParent(t *testing.T) {
	agentBin := requirements(t)
	delv := mustLook(t, "delv")
	if !inLab() {
		enterLab(t)
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	in := fixtureInputs(t, "dnssec-parent.yaml")
	digests := []uint8{dns.SHA256, dns.SHA384}
	if lab.release.Name == bindtools.BIND918.Name {
		// The cluster says it runs 9.18 (its image tag), and asks for what
		// 9.18 publishes: a SHA-256 CDS (docs/dnssec.md, BIND 9.18).
		in = in.Edit(t, "BindCluster", parCluster, func(obj map[string]any) { spec(obj)["image"] = "internetsystemsconsortium/bind9:9.18" })
		in = in.Edit(t, "BindDNSSECPolicy", "child", func(obj map[string]any) { spec(obj)["cdsDigestTypes"] = []any{"sha-256"} })
		digests = digests[:1]
	}
	r := renderInputs(t, in, nil)
	rc := r.Clusters[parCluster]
	c := lab.startCluster(r, parCluster, podPlan{IP: parIP, PrimarySvc: parSvc})
	c.waitReady(hang)
	defer c.stop()

	keys, probs := dnssec.Parse(rc.Secrets[layout.DNSSECSecretName(parCluster)].Data)
	if len(probs) != 0 {
		t.Fatalf("rendered keys: %v", probs)
	}
	var parentAnchor strings.Builder
	parentAnchor.WriteString("trust-anchors {\n")
	var wantDS, wantCDS, wantCDNSKEY []string
	for _, k := range keys {
		switch {
		case k.Zone() == parParent+"." && k.SEP():
			ds := k.DNSKEY.ToDS(dns.SHA256)
			fmt.Fprintf(&parentAnchor, "\t%q static-ds %d %d %d %q;\n", parParent, ds.KeyTag, ds.Algorithm, ds.DigestType, strings.ToUpper(ds.Digest))
		case k.Zone() == parChild+"." && k.SEP():
			for _, d := range digests {
				ds := k.DNSKEY.ToDS(d)
				wantDS = append(wantDS, rdata(ds))
				wantCDS = append(wantCDS, rdata(&dns.CDS{DS: *ds}))
			}
			wantCDNSKEY = append(wantCDNSKEY, rdata(&dns.CDNSKEY{DNSKEY: *k.DNSKEY}))
		}
	}
	parentAnchor.WriteString("};\n")
	sort.Strings(wantDS)
	sort.Strings(wantCDS)
	anchors := filepath.Join(t.TempDir(), "parent-anchor.conf")
	testutil.WriteFile(t, anchors, []byte(parentAnchor.String()))
	t.Logf("the parent's anchor:\n%s", parentAnchor.String())

	for _, p := range c.Pods {
		t.Run(p.Name, func(t *testing.T) {
			err := eventually(hang, 200*time.Millisecond, func() error {
				if got := served(p.Net.IP, parChild, dns.TypeDS); !cmp.Equal(wantDS, got) {
					return fmt.Errorf("DS at %s on %s (-rendered +served):\n%s", parChild, p.Name, cmp.Diff(wantDS, got))
				}
				return delvFrom(delv, anchors, p.Net.IP, parParent, "www."+parChild)
			})
			if err != nil {
				t.Error(err)
			}
			// named publishes CDS/CDNSKEY once it has signed the child;
			// the secondaries serve what they transferred.
			err = eventually(hang, 200*time.Millisecond, func() error {
				if got := served(p.Net.IP, parChild, dns.TypeCDS); !cmp.Equal(wantCDS, got) {
					return fmt.Errorf("CDS of %s on %s (-child's KSK, sha-256 and sha-384 +served):\n%s", parChild, p.Name, cmp.Diff(wantCDS, got))
				}
				if got := served(p.Net.IP, parChild, dns.TypeCDNSKEY); !cmp.Equal(wantCDNSKEY, got) {
					return fmt.Errorf("CDNSKEY of %s on %s (-child's KSK +served):\n%s", parChild, p.Name, cmp.Diff(wantCDNSKEY, got))
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("wrong parent anchor fails", func(t *testing.T) {
		text := parentAnchor.String()
		bad := digestRe.ReplaceAllStringFunc(text, func(m string) string { return m[:len(m)-1] + flip(m[len(m)-1]) })
		if bad == text {
			t.Fatalf("no digest found in %s", text)
		}
		wrong := filepath.Join(t.TempDir(), "wrong.conf")
		testutil.WriteFile(t, wrong, []byte(bad))
		if err := delvFrom(delv, wrong, c.Pods[0].Net.IP, parParent, "www."+parChild); err == nil {
			t.Errorf("delv validated www.%s with a wrong parent anchor", parChild)
		}
	})
}

// rdata is an RR's RDATA as text (its header cut off).
func rdata(rr dns.RR) string {
	return strings.TrimPrefix(rr.String(), rr.Header().String())
}

// served is the RDATA of the RRset of typ at name a server answers
// (authoritative data, TCP), sorted.
func served(server, name string, typ uint16) []string {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), typ)
	m.SetEdns0(4096, true)
	m.RecursionDesired = false
	cl := &dns.Client{Net: "tcp", Timeout: 2 * time.Second}
	r, _, err := cl.Exchange(m, server+":53")
	if err != nil || r.Rcode != dns.RcodeSuccess {
		return nil
	}
	var out []string
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == typ {
			out = append(out, rdata(rr))
		}
	}
	sort.Strings(out)
	return out
}

// delvFrom runs delv against server with anchors (for the zone root) as
// its only trust anchor, and wants name's A record "fully validated".
func delvFrom(delv, anchors, server, root, name string) error {
	out, err := exec.Command(delv, "@"+server, "-a", anchors, "+root="+root, "+tcp", name, "A").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "; fully validated") {
		return fmt.Errorf("delv @%s %s A (trust anchor: %s's DS): not validated (%v):\n%s", server, name, root, err, out)
	}
	return nil
}
