package multipod

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

const (
	secSvc = "198.18.23.10"
	// officeOutside is in the office view's range but outside
	// spec.allowRecursion (192.0.2.0/25): the open-recursion client.
	officeOutside = "192.0.2.200"
)

func secIP(i int) string { return fmt.Sprintf("198.18.22.%d", 10+i) }

// TestSecurityClasses proves these security classes on real named and the
// real agent, on every pod:
//   - open recursion: the office view recurses (recursion: true on an
//     authoritative cluster) for the clients of spec.allowRecursion only;
//     a client the view matches outside it, a client that reaches the view
//     by the key, and the world view get no recursion (RA clear);
//   - a key through an ACL: BIND takes a key inside a BindACL as one named
//     in place, so a request signed with ops-key from a world address
//     lands in the office view, and the agent's UPDATEs with it reach the
//     office zone only. That is why fn-validate refuses the same key as
//     another view's update key (the world zone's updates would land in the
//     office view); the refusal is checked on the variant.
func TestSecurityClasses(t *testing.T) {
	c, _ := ownLabCluster(t, "security.yaml", "sec", podPlan{IP: secIP, PrimarySvc: secSvc, NetnsPrefix: "sec-"}, func(*Lab) {
		sh(t, "ip", "addr", "add", officeOutside+"/32", "dev", bridge)
	})
	if c == nil {
		return
	}
	// The variant fn-validate must refuse: the world zone updated with the
	// key the office view's ACL holds.
	bad := fixtureInputs(t, "security.yaml").Edit(t, "BindZone", "corp-world", func(obj map[string]any) { spec(obj)["updateKeyRef"] = "ops-key" })
	if _, rs := pipeline.Run(pipeline.Input{Items: bad}, render.Options{Rand: &testutil.DetRand{}}); !refusedWith(rs, "corp-world", "spec.updateKeyRef", "ops-key") {
		t.Errorf("fn-validate accepts the world zone updated with ops-key, which the office view's BindACL holds:\n%v", rs)
	}
	ops := c.tsig(t, "ops-key-tsig")

	for _, p := range c.Pods {
		ip := p.Net.IP
		// Served first: the agent's record in the office view.
		if err := eventually(hang, 200*time.Millisecond, func() error {
			return expect(ip, "secret.corp.example", dns.TypeA, q{src: officeClient}, dns.RcodeSuccess, []string{"10.9.9.9"})
		}); err != nil {
			t.Errorf("%s: the DNSRecord the agent updates with ops-key (through the ACL) in the office view: %v", p.Name, err)
			continue
		}
		for _, c := range []struct {
			who      string
			o        q
			www      string // the copy of www.corp.example this client gets
			ra       bool
			hasSecre bool
		}{
			{"an office client in allowRecursion", q{src: officeClient, rd: true}, "10.1.1.1", true, true},
			{"an office client outside allowRecursion", q{src: officeOutside, rd: true}, "10.1.1.1", false, true},
			{"a world address signing with ops-key (the key through the ACL)", q{src: labClient, rd: true, key: &ops, tcp: true}, "10.1.1.1", false, true},
			{"a world client", q{src: labClient, rd: true}, "198.51.100.1", false, false},
		} {
			m, err := query(ip, "www.corp.example", dns.TypeA, c.o)
			if err != nil {
				t.Errorf("%s: %s: %v", p.Name, c.who, err)
				continue
			}
			if got := answers(m, dns.TypeA); len(got) != 1 || got[0] != c.www || !m.Authoritative {
				t.Errorf("%s: %s got www.corp.example %v (aa %v), want %s: the wrong view", p.Name, c.who, got, m.Authoritative, c.www)
			}
			if m.RecursionAvailable != c.ra {
				t.Errorf("%s: %s: recursion available %v, want %v (open recursion)", p.Name, c.who, m.RecursionAvailable, c.ra)
			}
			rcode := dns.RcodeNameError
			var want []string
			if c.hasSecre {
				rcode, want = dns.RcodeSuccess, []string{"10.9.9.9"}
			}
			if err := expect(ip, "secret.corp.example", dns.TypeA, c.o, rcode, want); err != nil {
				t.Errorf("%s: %s: secret.corp.example: %v", p.Name, c.who, err)
			}
		}
	}
}

// refusedWith: rs holds an error on object name at field whose message
// names word.
func refusedWith(rs diag.Results, name, field, word string) bool {
	for _, r := range rs {
		if r.Severity == diag.Error && r.Source.Ref.Name == name && r.Field == field && strings.Contains(r.Message, word) {
			return true
		}
	}
	return false
}
