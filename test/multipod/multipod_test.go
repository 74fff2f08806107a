// Package multipod runs rendered bind-fn clusters as real named processes
// under the real agent, each pod in its own network and mount namespace,
// inside a private lab network (docs/design.md#lab). See TestLab.
package multipod

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// Address plan (all in 198.18.0.0/15, benchmarking space, plus the example's
// office range for one client): the lab's own client addresses are on the
// bridge; pods get 198.18.0.x (auth), 198.18.2.x (resolver), 198.18.3.x
// (replica-9 bench), 198.18.4.x (reference), 198.18.5.x (sharded zone);
// Services are /32 extras.
const (
	authPrimarySvc = "198.18.1.10"
	authServeVIP   = "198.18.1.53" // stands in for the example's 10.96.53.53
	resPrimarySvc  = "198.18.1.100"
)

func authIP(i int) string    { return fmt.Sprintf("198.18.0.%d", 10+i) }
func authNewIP(i int) string { return fmt.Sprintf("198.18.0.%d", 60+i) }

// authInputs is examples/authoritative as the lab runs it. Nothing is
// rewritten: it names no address the lab needs to replace.
func authInputs(t testing.TB) Inputs {
	in := Inputs(testutil.ReadItems(t, filepath.Join(bindtools.RepoRoot(t), "examples", "authoritative")))
	if os.Getenv("BINDFN_LAB_NO_RRL") == "1" { // measure without the example's response rate limit
		in = in.Edit(t, "BindCluster", "auth", func(obj map[string]any) { delete(spec(obj), "rateLimit") })
	}
	return in
}

// resolverInputs is examples/resolver with its forwarder (the auth
// cluster's serve clusterIP 10.96.53.53) pointed at the lab's stand-in.
func resolverInputs(t testing.TB) Inputs {
	in := Inputs(testutil.ReadItems(t, filepath.Join(bindtools.RepoRoot(t), "examples", "resolver")))
	in = in.Edit(t, "BindZone", "example-com-forward", func(obj map[string]any) {
		spec(obj)["forwarders"] = []any{authServeVIP}
	})
	// The lab has no root servers: validation could never build a chain of
	// trust (every answer would SERVFAIL), so the lab's copy validates nothing.
	return in.Edit(t, "BindCluster", "resolver", func(obj map[string]any) {
		spec(obj)["dnssecValidation"] = "no"
	})
}

// requirements fails (or skips on the opt-outs) before anything starts.
func requirements(t *testing.T) (agentBin string) {
	t.Helper()
	bindtools.RequireRoot(t)
	bindtools.RequireBIND(t)
	mustLook(t, "ip")
	mustLook(t, "unshare")
	return bindtools.Bin(t, "bind-fn-agent")
}

// TestLab runs every scenario of docs/design.md#lab. Outside the lab it re-executes
// itself inside one; inside, the subtests share one authoritative cluster.
func TestLab(t *testing.T) {
	agentBin := requirements(t)
	var edKept string // the record external-dns leaves, which DNSRecords must not touch
	if !inLab() {
		enterLab(t)
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	in := authInputs(t)
	r := renderInputs(t, in, nil)
	start := time.Now()
	auth := lab.startCluster(r, "auth", podPlan{IP: authIP, PrimarySvc: authPrimarySvc, Extra: map[int][]string{1: {authServeVIP}}})
	auth.waitReady(hang)
	t.Logf("auth: %d pods ready in %v", len(auth.Pods), time.Since(start).Round(time.Millisecond))

	key := auth.tsig(t, "externaldns-key-tsig")
	var bench []propagation

	t.Run("1-start", func(t *testing.T) { scenarioStart(t, auth) })
	t.Run("3-notify", func(t *testing.T) { scenarioNotify(t, auth) })
	t.Run("3-notify-tcp-retry", func(t *testing.T) { scenarioNotifyTCPRetry(t, auth, key) })
	t.Run("2-updates", func(t *testing.T) {
		bench = append(bench, measure(t, "bind-fn auth (primary + 2 secondaries)", authPrimarySvc, podIPs(auth.Secondaries()), "apps.example.com", key, benchUpdates, hang))
		ref := startReference(t, lab, 2, 10)
		bench = append(bench, measure(t, "reference (hand-written, 2 secondaries)", ref.primary, ref.secondaries, refZone, ref.key, benchUpdates, hang))
		ref1 := startReference(t, lab, 1, 30)
		bench = append(bench, measure(t, "reference pair (hand-written, 1 secondary)", ref1.primary, ref1.secondaries, refZone, ref1.key, benchUpdates, hang))
		checkNoRefusedNotify(t, auth.Pods)
	})
	t.Run("7-views-dnssec", func(t *testing.T) { scenarioViews(t, auth) })
	t.Run("7-resolver", func(t *testing.T) { scenarioResolver(t, lab) })
	t.Run("4-config-change", func(t *testing.T) { r, in = scenarioConfigChange(t, auth, r, in) })
	t.Run("5-bad-config", func(t *testing.T) { scenarioBadConfig(t, auth, r) })
	t.Run("11-clients", func(t *testing.T) {
		t.Run("nsupdate", func(t *testing.T) { scenarioNsupdate(t, auth) })
		t.Run("dig-axfr", func(t *testing.T) { scenarioDigAXFR(t, auth) })
		t.Run("external-dns", func(t *testing.T) {
			var report string
			edBin := bindtools.Bin(t, "external-dns") // hack/build-external-dns.sh, via make tools
			edKept, report = scenarioExternalDNS(t, auth, edBin)
			t.Logf("external-dns %s, time from its start to the pass's records served (or gone) on each pod:\n%s", externalDNSVersion, report)
		})
		// edlarge_test.go: the same binary on a 10,000-record zone.
		t.Run("external-dns-10k", func(t *testing.T) { scenarioExternalDNSLarge(t, auth, bindtools.Bin(t, "external-dns")) })
	})
	t.Run("8-records", func(t *testing.T) { r, in = scenarioRecords(t, auth, r, in, edKept) })
	t.Run("6-primary-restart", func(t *testing.T) { scenarioPrimaryRestart(t, lab, auth, key) })
	t.Run("6-secondary-restart", func(t *testing.T) { scenarioSecondaryRestart(t, lab, auth, key) })
	auth.stop()
	t.Run("sharded-zone", func(t *testing.T) { scenarioShardedZone(t, lab) })
	t.Run("dynamic-zone-50k", func(t *testing.T) { scenarioDynamicScale(t, lab) })
	t.Run("2-updates-8-secondaries", func(t *testing.T) {
		in9 := authInputs(t).Edit(t, "BindCluster", "auth", func(obj map[string]any) { spec(obj)["replicas"] = 9 })
		big := lab.startCluster(renderInputs(t, in9, nil), "auth", podPlan{
			IP: func(i int) string { return fmt.Sprintf("198.18.3.%d", 10+i) }, PrimarySvc: "198.18.1.20", NetnsPrefix: "b9-",
		})
		big.waitReady(hang)
		bench = append(bench, measure(t, "bind-fn auth (primary + 8 secondaries)", big.PrimarySvc, podIPs(big.Secondaries()), "apps.example.com", big.tsig(t, "externaldns-key-tsig"), benchUpdates, hang))
		ref := startReference(t, lab, 8, 50)
		bench = append(bench, measure(t, "reference (hand-written, 8 secondaries)", ref.primary, ref.secondaries, refZone, ref.key, benchUpdates, hang))
		checkNoRefusedNotify(t, big.Pods)
	})
	var report strings.Builder
	for _, b := range bench {
		report.WriteString(b.String() + "\n")
	}
	for i := 0; i+1 < len(bench); i++ { // each cluster series is followed by its reference
		if c, r := bench[i], bench[i+1]; strings.HasPrefix(c.label, "bind-fn") && strings.HasPrefix(r.label, "reference") {
			fmt.Fprintf(&report, "ratio bind-fn/reference at %d secondaries: median %.2f, p95 %.2f\n", c.secs,
				float64(c.pct(0.5))/float64(r.pct(0.5)), float64(c.pct(0.95))/float64(r.pct(0.95)))
		}
	}
	t.Logf("time from a TSIG-signed UPDATE to the record on every secondary:\n%s", report.String())
}

// externalDNSVersion is what hack/build-external-dns.sh builds.
const externalDNSVersion = "v0.23.0"

// benchUpdates per series (at least 50: docs/design.md#lab).
const benchUpdates = 60

// zoneChecks are the zones of the example with a record each, per view.
type zoneCheck struct {
	view, zone, name string
	qtype            uint16
	src              string
}

func exampleZoneChecks() []zoneCheck {
	return []zoneCheck{
		{"external", "example.com", "www.example.com", dns.TypeCNAME, labClient},
		{"external", "apps.example.com", "shop.apps.example.com", dns.TypeA, labClient},
		{"external", "secure.example.com", "www.secure.example.com", dns.TypeA, labClient},
		{"internal", "example.com", "intranet.example.com", dns.TypeA, officeClient},
	}
}

// scenarioStart: every zone answered authoritatively by every pod.
func scenarioStart(t *testing.T, c *Cluster) {
	for _, p := range c.Pods {
		for _, zc := range exampleZoneChecks() {
			err := eventually(hang, 100*time.Millisecond, func() error {
				r, err := query(p.Net.IP, zc.name, zc.qtype, q{src: zc.src})
				if err != nil {
					return err
				}
				if r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(answers(r, zc.qtype)) == 0 {
					return fmt.Errorf("rcode %s aa=%v answers %v", dns.RcodeToString[r.Rcode], r.Authoritative, r.Answer)
				}
				return nil
			})
			if err != nil {
				t.Errorf("%s: %s %s (view %s, from %s): %v", p.Name, zc.name, dns.TypeToString[zc.qtype], zc.view, zc.src, err)
			}
		}
	}
}
