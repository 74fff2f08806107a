package multipod

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// The multi-cluster lab (docs/multi-cluster.md): each "Kubernetes cluster"
// is a network of its own (a bridge, 198.19.4<n>.0/24), the networks are
// linked only through a router namespace whose interfaces delay every packet
// (a TUN device the test process holds packets in: router), and the lab's own client sits on every bridge, so its probes
// reach each pod directly, without the delay.

// siteDelay is the one-way delay the router adds towards each site: a
// round trip between two sites is twice this.
const siteDelay = 15 * time.Millisecond

// site is one cluster's network.
type site struct {
	lab    *Lab
	n      int
	bridge string
}

func sitePrefix(n int) string      { return fmt.Sprintf("198.19.%d", 40+n) }
func (s *site) host() string       { return sitePrefix(s.n) + ".1" }
func (s *site) gw() string         { return sitePrefix(s.n) + ".254" }
func (s *site) ip(i int) string    { return fmt.Sprintf("%s.%d", sitePrefix(s.n), 10+i) }
func (s *site) primarySvc() string { return sitePrefix(s.n) + ".200" }

// addSite makes site n's bridge, with the lab client on it.
func (l *Lab) addSite(n int) *site {
	t := l.t
	t.Helper()
	s := &site{lab: l, n: n, bridge: fmt.Sprintf("br-s%d", n)}
	sh(t, "ip", "link", "add", s.bridge, "type", "bridge")
	sh(t, "ip", "addr", "add", s.host()+"/24", "dev", s.bridge)
	sh(t, "ip", "link", "set", s.bridge, "up")
	return s
}

// addNetns is Lab.addNetns on the site's bridge: the pod's default route is
// the router; the lab's own addresses (198.18/16) are reached directly.
func (s *site) addNetns(name, ip string, extra ...string) *Netns {
	l, t := s.lab, s.lab.t
	t.Helper()
	l.mu.Lock()
	l.nveth++
	host := fmt.Sprintf("vl%d", l.nveth)
	l.mu.Unlock()
	name = labRun() + name
	sh(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = runQuiet("ip", "netns", "del", name) })
	sh(t, "ip", "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", name)
	sh(t, "ip", "link", "set", host, "master", s.bridge, "up")
	sh(t, "ip", "-n", name, "link", "set", "lo", "up")
	sh(t, "ip", "-n", name, "addr", "add", ip+"/24", "dev", "eth0")
	for _, e := range extra {
		sh(t, "ip", "-n", name, "addr", "add", e+"/32", "dev", "eth0")
	}
	sh(t, "ip", "-n", name, "link", "set", "eth0", "up")
	sh(t, "ip", "-n", name, "route", "add", "default", "via", s.gw())
	sh(t, "ip", "-n", name, "route", "add", "198.18.0.0/16", "via", s.host())
	return &Netns{Name: name, IP: ip, Extra: extra, Usr: l.release.Usr(t)}
}

// router links the sites: one interface per site (r<n>, address .254),
// forwarding on. The kernel here has no netem (CONFIG_NET_SCH_NETEM is not
// set), so the delay is made in user space: policy routing sends every
// packet that arrives on a site interface into a TUN device (dl0), the test
// process holds each packet read from it for siteDelay and writes it back,
// and the kernel routes it from there (main table) out of the destination
// site's interface. A packet between two sites passes dl0 once: one way
// costs siteDelay, a round trip twice that.
type router struct {
	lab  *Lab
	name string
	tun  *os.File
}

func (l *Lab) addRouter(sites []*site) *router {
	t := l.t
	t.Helper()
	r := &router{lab: l, name: labRun() + "rtr"}
	sh(t, "ip", "netns", "add", r.name)
	t.Cleanup(func() { _ = runQuiet("ip", "netns", "del", r.name) })
	for _, k := range []string{"net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"} {
		sh(t, "ip", "netns", "exec", r.name, "sysctl", "-q", "-w", k)
	}
	sh(t, "ip", "-n", r.name, "link", "set", "lo", "up")
	for _, s := range sites {
		dev := fmt.Sprintf("r%d", s.n)
		peer := fmt.Sprintf("vr%d", s.n)
		sh(t, "ip", "link", "add", peer, "type", "veth", "peer", "name", dev, "netns", r.name)
		sh(t, "ip", "link", "set", peer, "master", s.bridge, "up")
		sh(t, "ip", "-n", r.name, "addr", "add", s.gw()+"/24", "dev", dev)
		sh(t, "ip", "-n", r.name, "link", "set", dev, "up")
		sh(t, "ip", "-n", r.name, "rule", "add", "iif", dev, "lookup", "100", "priority", "100")
	}
	// The TUN device is made here (the lab's namespace, where this process
	// runs) and moved into the router's; the descriptor keeps working.
	r.tun = openTun(t, "dl0")
	t.Cleanup(func() { r.tun.Close() })
	sh(t, "ip", "link", "set", "dl0", "netns", r.name)
	sh(t, "ip", "-n", r.name, "link", "set", "dl0", "up")
	sh(t, "ip", "netns", "exec", r.name, "sysctl", "-q", "-w", "net.ipv4.conf.dl0.rp_filter=0")
	sh(t, "ip", "-n", r.name, "route", "add", "default", "dev", "dl0", "table", "100")
	go r.delay(siteDelay)
	return r
}

// delay holds every packet read from the TUN device for d, in order, and
// writes it back.
func (r *router) delay(d time.Duration) {
	type pkt struct {
		due time.Time
		b   []byte
	}
	q := make(chan pkt, 65536)
	go func() {
		for p := range q {
			time.Sleep(time.Until(p.due))
			_, _ = r.tun.Write(p.b)
		}
	}()
	buf := make([]byte, 65536)
	for {
		n, err := r.tun.Read(buf)
		if err != nil {
			close(q)
			return
		}
		q <- pkt{time.Now().Add(d), append([]byte(nil), buf[:n]...)}
	}
}

// openTun opens a TUN device (IFF_TUN|IFF_NO_PI: bare IP packets).
func openTun(t *testing.T, name string) *os.File {
	t.Helper()
	fd, err := syscall.Open("/dev/net/tun", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/net/tun: %v (the multi-cluster lab needs the tun device)", err)
	}
	var ifr [40]byte
	copy(ifr[:16], name)
	*(*uint16)(unsafe.Pointer(&ifr[16])) = syscall.IFF_TUN | syscall.IFF_NO_PI
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), uintptr(syscall.TUNSETIFF), uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		syscall.Close(fd)
		t.Fatalf("TUNSETIFF %s: %v", name, e)
	}
	return os.NewFile(uintptr(fd), "/dev/net/tun")
}

// cut drops, silently, every packet the router would forward to or from
// site n, as a link that went dark (no ICMP: the other side times out);
// restore undoes it.
func (r *router) cut(n int) {
	t := r.lab.t
	sh(t, "ip", "-n", r.name, "rule", "add", "to", sitePrefix(n)+".0/24", "blackhole", "priority", "10")
	sh(t, "ip", "-n", r.name, "rule", "add", "from", sitePrefix(n)+".0/24", "blackhole", "priority", "11")
}

func (r *router) restore(n int) {
	t := r.lab.t
	sh(t, "ip", "-n", r.name, "rule", "del", "priority", "10")
	sh(t, "ip", "-n", r.name, "rule", "del", "priority", "11")
}

// cutUDP drops only UDP to and from site n: every NOTIFY's first attempt
// is lost and BIND retries it over TCP, which gets through.
func (r *router) cutUDP(n int) {
	t := r.lab.t
	sh(t, "ip", "-n", r.name, "rule", "add", "to", sitePrefix(n)+".0/24", "ipproto", "udp", "blackhole", "priority", "12")
	sh(t, "ip", "-n", r.name, "rule", "add", "from", sitePrefix(n)+".0/24", "ipproto", "udp", "blackhole", "priority", "13")
}

func (r *router) restoreUDP() {
	t := r.lab.t
	sh(t, "ip", "-n", r.name, "rule", "del", "priority", "12")
	sh(t, "ip", "-n", r.name, "rule", "del", "priority", "13")
}

// rtt is the round trip from a pod of one site to an address in another,
// as dig (inside the pod's network namespace) reports five SOA queries.
func (r *router) rtt(t *testing.T, from *Netns, to, zone string) string {
	t.Helper()
	dig := mustLook(t, "dig")
	var times []string
	for range 5 {
		out := sh(t, "ip", "netns", "exec", from.Name, dig, "+tries=1", "+time=2", "@"+to, zone, "SOA")
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "Query time:") {
				times = append(times, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), ";; Query time:")))
			}
		}
	}
	return strings.Join(times, ", ")
}

func runQuiet(name string, args ...string) error { return exec.Command(name, args...).Run() }

// TestMultiCluster proves replication across Kubernetes clusters
// (docs/multi-cluster.md) on real named: a primary cluster of 3 pods and
// two secondary clusters of 3, each on its own network behind a router
// that adds siteDelay each way. Every pod of every cluster loads every
// zone; a TSIG update on the primary reaches every pod of every cluster
// (propagation beside the primary cluster's own); a zone added to the
// catalog (only the primary cluster re-rendered) appears on every remote
// pod and goes when removed; only the shared key admits transfers and
// NOTIFYs across; with the link to one secondary cluster dark for 60 s its
// pods keep answering, and after it returns they have the new serial
// within the relay's retry time.
func TestMultiCluster(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, path.Dir(agentBin))
	sites := []*site{lab.addSite(0), lab.addSite(1), lab.addSite(2)}
	rtr := lab.addRouter(sites)
	in := Inputs(testutil.ReadItems(t, filepath.Join("testdata", "multicluster")))
	r := renderInputs(t, in, nil)
	names := []string{"corp", "edge1", "edge2"}
	clusters := map[string]*Cluster{}
	start := time.Now()
	for i, name := range names {
		s := sites[i]
		clusters[name] = lab.startCluster(r, name, podPlan{IP: s.ip, PrimarySvc: s.primarySvc(), Net: s.addNetns})
	}
	for _, name := range names {
		clusters[name].waitReady(hang)
	}
	corp, edge1, edge2 := clusters["corp"], clusters["edge1"], clusters["edge2"]
	t.Logf("3 clusters of 3 pods ready in %v on %s; SOA query from edge1-0 to corp's primary Service through the router (dig): %s", time.Since(start).Round(time.Millisecond), lab.release, rtr.rtt(t, edge1.Pods[0].Net, corp.PrimarySvc, "apps.example.org"))
	var all, remote []*Pod
	for _, name := range names {
		all = append(all, clusters[name].Pods...)
	}
	remote = append(append(remote, edge1.Pods...), edge2.Pods...)
	key := corp.tsig(t, "apps-update-tsig")
	k1 := corp.tsig(t, "corp-edge1-tsig")

	t.Run("every-zone-on-every-pod", func(t *testing.T) {
		for _, p := range all {
			for _, z := range []struct{ name, www string }{{"apps.example.org", "192.0.2.80"}, {"legacy.example.org", "192.0.2.81"}} {
				if err := eventually(hang, 100*time.Millisecond, func() error {
					return expect(p.Net.IP, "www."+z.name, dns.TypeA, q{}, dns.RcodeSuccess, []string{z.www})
				}); err != nil {
					t.Errorf("%s: %v", p.Name, err)
				}
			}
		}
	})

	var bench []propagation
	t.Run("updates", func(t *testing.T) {
		bench = append(bench, measure(t, "primary cluster (corp-1, corp-2)", corp.PrimarySvc, podIPs(corp.Secondaries()), "apps.example.org", key, benchUpdates, hang))
		bench = append(bench, measure(t, "relays (edge1-0, edge2-0)", corp.PrimarySvc, []string{edge1.Pods[0].Net.IP, edge2.Pods[0].Net.IP}, "apps.example.org", key, benchUpdates, hang))
		bench = append(bench, measure(t, "every pod of 2 secondary clusters", corp.PrimarySvc, podIPs(remote), "apps.example.org", key, benchUpdates, hang))
		bench = append(bench, measure(t, "every pod of all 3 clusters", corp.PrimarySvc, podIPs(all[1:]), "apps.example.org", key, benchUpdates, hang))
		checkNoRefusedNotify(t, all)
		var b strings.Builder
		for _, p := range bench {
			b.WriteString(p.String() + "\n")
		}
		t.Logf("time from a TSIG-signed UPDATE on corp to the record on every listed pod (one-way delay %v between clusters, %s):\n%s", siteDelay, lab.release, b.String())
	})

	t.Run("catalog-across", func(t *testing.T) {
		added := in.AddFile(t, "multicluster-added-zone.yaml")
		r2 := renderInputs(t, added, r)
		for _, name := range []string{"edge1", "edge2"} {
			// Every ConfigMap: the config and each zones shard (docs/state.md#shards).
			before, after := configMapData(r.Clusters[name]), configMapData(r2.Clusters[name])
			if d := cmp.Diff(before, after); d != "" {
				t.Fatalf("adding a catalog zone to corp changed %s's render; it must not need one:\n%s", name, d)
			}
		}
		t0 := time.Now()
		corp.swap(r2) // only the primary cluster gets the new render
		for _, p := range all {
			if err := eventually(hang, 50*time.Millisecond, func() error {
				return expect(p.Net.IP, "www.new.example.org", dns.TypeA, q{}, dns.RcodeSuccess, []string{"192.0.2.82"})
			}); err != nil {
				t.Errorf("%s: the catalog zone never appeared: %v", p.Name, err)
			}
		}
		t.Logf("a zone added to corp's catalog answered on every pod of the 3 clusters %v after corp's ConfigMaps were swapped", time.Since(t0).Round(time.Millisecond))
		r3 := renderInputs(t, in, r2)
		t0 = time.Now()
		corp.swap(r3)
		for _, p := range remote {
			if err := eventually(hang, 50*time.Millisecond, func() error {
				m, err := query(p.Net.IP, "www.new.example.org", dns.TypeA, q{})
				if err != nil {
					return err
				}
				if m.Rcode == dns.RcodeSuccess && len(m.Answer) > 0 {
					return fmt.Errorf("still answers %v", answers(m, dns.TypeA))
				}
				return nil
			}); err != nil {
				t.Errorf("%s: the zone removed from the catalog is still served: %v", p.Name, err)
			}
		}
		t.Logf("removed from the catalog: gone from every remote pod %v after the swap", time.Since(t0).Round(time.Millisecond))
		r = r3
	})

	t.Run("hidden-primary", func(t *testing.T) {
		hidden := in.Edit(t, "BindCluster", "corp", func(obj map[string]any) { spec(obj)["replication"] = map[string]any{"hidden": true} })
		rh := renderInputs(t, hidden, r)
		if _, ok := rh.Clusters["corp"].Services[layout.ServeServiceName("corp")]; ok {
			t.Errorf("a hidden corp still renders its serve Service")
		}
		corp.swap(rh)
		for _, p := range corp.Pods {
			if err := eventually(hang, 100*time.Millisecond, func() error {
				return expect(p.Net.IP, "www.apps.example.org", dns.TypeA, q{}, dns.RcodeRefused, nil)
			}); err != nil {
				t.Errorf("hidden corp: %s still answers an unsigned query: %v", p.Name, err)
			}
		}
		// UPDATEs (the update key) and the secondary clusters (their keys)
		// still get through.
		res := measure(t, "hidden corp, every remote pod", corp.PrimarySvc, podIPs(remote), "apps.example.org", key, 10, hang)
		t.Logf("hidden corp: unsigned queries REFUSED on its 3 pods; %s", res)
		for _, p := range remote {
			if err := expect(p.Net.IP, "www.apps.example.org", dns.TypeA, q{}, dns.RcodeSuccess, []string{"192.0.2.80"}); err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
		}
		r = renderInputs(t, in, rh)
		corp.swap(r)
		if err := eventually(hang, 100*time.Millisecond, func() error {
			return expect(corp.Pods[1].Net.IP, "www.apps.example.org", dns.TypeA, q{}, dns.RcodeSuccess, []string{"192.0.2.80"})
		}); err != nil {
			t.Errorf("corp not answering again after hidden was removed: %v", err)
		}
	})

	t.Run("only-the-key-crosses", func(t *testing.T) {
		if _, err := axfrFromClient(corp.PrimarySvc, "apps.example.org", k1); err != nil {
			t.Errorf("AXFR from corp with the key edge1 shares: %v", err)
		}
		wrong := TSIG{Name: k1.Name, Secret: "d3JvbmctbWF0ZXJpYWwtd3JvbmctbWF0ZXJpYWwtMTI="}
		if _, err := axfrFromClient(corp.PrimarySvc, "apps.example.org", wrong); err == nil {
			t.Errorf("AXFR from corp with the shared key's name and a wrong secret succeeded")
		} else {
			t.Logf("wrong secret: %v", err)
		}
		other := TSIG{Name: "corp-edge3", Secret: k1.Secret}
		if _, err := axfrFromClient(corp.PrimarySvc, "apps.example.org", other); err == nil {
			t.Errorf("AXFR from corp with an unknown key succeeded")
		}
		m := new(dns.Msg)
		m.SetAxfr("apps.example.org.")
		if r, _, err := client(q{tcp: true}).Exchange(m, corp.PrimarySvc+":53"); err == nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0 {
			t.Errorf("an unsigned AXFR from corp succeeded")
		}
		// A NOTIFY from another address, unsigned, is refused by a relay.
		relay := edge1.Pods[0]
		if _, err := notify(relay.Net.IP, labClient, "apps.example.org"); err != nil {
			t.Logf("unsigned NOTIFY: %v", err)
		}
		expectRefusedNotify(t, relay)
	})

	t.Run("partition", func(t *testing.T) {
		loop := startRemoteQueryLoop(edge1.Pods)
		rtr.cut(1)
		cut := time.Now()
		name := fmt.Sprintf("cut-%x.apps.example.org.", time.Now().UnixNano()&0xffffff)
		if err := update(corp.PrimarySvc, "apps.example.org", key, func(m *dns.Msg) { m.Insert([]dns.RR{mustRR(name + " 60 IN A 198.51.100.99")}) }); err != nil {
			t.Fatal(err)
		}
		var pl tcpPoller
		defer pl.close()
		// The rest of the world moves on.
		for _, p := range append(corp.Secondaries(), edge2.Pods...) {
			if err := eventually(hang, 50*time.Millisecond, func() error {
				if !pl.has(p.Net.IP, name, dns.TypeA, "198.51.100.99") {
					return fmt.Errorf("%s does not have %s", p.Name, name)
				}
				return nil
			}); err != nil {
				t.Error(err)
			}
		}
		time.Sleep(60*time.Second - time.Since(cut))
		for _, p := range edge1.Pods {
			if pl.has(p.Net.IP, name, dns.TypeA, "198.51.100.99") {
				t.Errorf("%s has the update made while its link was cut: the cut let something through", p.Name)
			}
		}
		rtr.restore(1)
		back := time.Now()
		var got []string
		for _, p := range edge1.Pods {
			if err := eventually(hang, 100*time.Millisecond, func() error {
				if !pl.has(p.Net.IP, name, dns.TypeA, "198.51.100.99") {
					return fmt.Errorf("%s does not have %s", p.Name, name)
				}
				return nil
			}); err != nil {
				t.Error(err)
			}
			got = append(got, fmt.Sprintf("%s %v", p.Name, time.Since(back).Round(100*time.Millisecond)))
		}
		total, failures := loop.finish()
		if len(failures) > 0 {
			t.Errorf("%d of %d queries to edge1 failed during the cut and after:\n%s", len(failures), total, strings.Join(failures[:min(len(failures), 20)], "\n"))
		}
		t.Logf("link to edge1 dark for %v: %d queries to its pods, %d failed; after it returned, the update made during the cut was on: %s (relay max-retry-time 30 s, max-refresh-time 60 s)",
			back.Sub(cut).Round(time.Second), total, len(failures), strings.Join(got, ", "))
		relay := corp.Pods[0].Log.String()
		t.Logf("corp-0's NOTIFYs to edge1's relay during the cut:\n%s", grep(relay, edge1.PrimarySvc))
		checkSignedRetries(t, corp.Pods[0], edge1.PrimarySvc)
	})
	checkNoRefusedNotify(t, all)

	// What BIND does with a NOTIFY whose UDP attempt is lost: it retries
	// over TCP once. With the rendered server statements the retry is
	// signed and the relay takes it; without them (the control, corp's
	// named.conf edited) it goes out unsigned from corp-0's pod address
	// and the relay refuses it, the issue's "refused notify from
	// non-primary".
	t.Run("notify-tcp-retry", func(t *testing.T) {
		relay := edge1.Pods[0]
		if lab.release.Name == bindtools.BIND918.Name {
			// BIND 9.18 (lib/dns/zone.c, notify_done) never retries a
			// NOTIFY over TCP: it resends the same signed UDP message,
			// then gives up; the relay catches up by a resend that gets
			// through or at its refresh (max-refresh-time 60, retry 30).
			relayMark := len(relay.Log.String())
			rtr.cutUDP(1)
			name := fmt.Sprintf("tcp-918-%x.apps.example.org.", time.Now().UnixNano()&0xffffff)
			t0 := time.Now()
			if err := update(corp.PrimarySvc, "apps.example.org", key, func(m *dns.Msg) { m.Insert([]dns.RR{mustRR(name + " 60 IN A 198.51.100.98")}) }); err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Second)
			rtr.restoreUDP()
			var pl tcpPoller
			defer pl.close()
			if err := eventually(hang, 100*time.Millisecond, func() error {
				if !pl.has(relay.Net.IP, name, dns.TypeA, "198.51.100.98") {
					return fmt.Errorf("%s does not have %s", relay.Name, name)
				}
				return nil
			}); err != nil {
				t.Error(err)
			}
			got := grep(relay.Log.String()[relayMark:], "received notify for zone 'apps.example.org'")
			t.Logf("9.18, UDP to edge1 dropped for 10 s: NOTIFYs the relay received (UDP resends): %q; the record on the relay %v after the update", got, time.Since(t0).Round(100*time.Millisecond))
			return
		}
		try := func(label string) (signed bool, refused string, took time.Duration) {
			t.Helper()
			mark := len(corp.Pods[0].Log.String())
			relayMark := len(relay.Log.String())
			rtr.cutUDP(1)
			defer rtr.restoreUDP()
			name := fmt.Sprintf("tcp-%s-%x.apps.example.org.", label, time.Now().UnixNano()&0xffffff)
			t0 := time.Now()
			if err := update(corp.PrimarySvc, "apps.example.org", key, func(m *dns.Msg) { m.Insert([]dns.RR{mustRR(name + " 60 IN A 198.51.100.98")}) }); err != nil {
				t.Fatal(err)
			}
			// The relay's log says how the NOTIFY arrived (UDP is cut, so
			// over TCP): signed ("received notify ... TSIG '<key>'") or not
			// (then "refused notify from non-primary"). 9.18 logs no
			// per-address "sending notify" line at info; 9.20 does.
			var got string
			if err := eventually(hang, 100*time.Millisecond, func() error {
				for _, l := range strings.Split(relay.Log.String()[relayMark:], "\n") {
					if strings.Contains(l, "received notify for zone 'apps.example.org'") {
						got = l
						return nil
					}
				}
				return fmt.Errorf("the relay received no NOTIFY for apps.example.org over TCP")
			}); err != nil {
				t.Fatal(err)
			}
			retry := grep(corp.Pods[0].Log.String()[mark:], edge1.PrimarySvc+"#")
			var pl tcpPoller
			defer pl.close()
			_ = eventually(20*time.Second, 100*time.Millisecond, func() error {
				if pl.has(relay.Net.IP, name, dns.TypeA, "198.51.100.98") {
					took = time.Since(t0)
					return nil
				}
				if r := grep(relay.Log.String()[relayMark:], "refused notify"); r != "" {
					refused = r
				}
				return fmt.Errorf("not yet")
			})
			if refused == "" {
				refused = grep(relay.Log.String()[relayMark:], "refused notify")
			}
			t.Logf("%s: corp-0 (9.20 logs each send):\n%s\nthe relay: %s", label, retry, strings.TrimSpace(got))
			return strings.Contains(got, "TSIG"), refused, took
		}
		signed, refused, took := try("rendered")
		if !signed || refused != "" {
			t.Errorf("with the rendered server statements the TCP retry must be signed and taken: signed=%v, the relay logged %q", signed, refused)
		}
		t.Logf("rendered config: the NOTIFY's UDP attempt lost, its TCP retry signed and taken; the record on the relay after %v (0: not within 20 s: the relay's SOA query goes over UDP first, lost too, and BIND falls back to TCP only at its retry limit)", took.Round(time.Millisecond))
		corp.swapConfigData(func(k, v string) string {
			if k != layout.NamedConfPrimary {
				return v
			}
			var out []string
			skip := false
			for _, l := range strings.Split(v, "\n") {
				switch {
				case strings.HasPrefix(l, "server "):
					skip = true
				case skip && l == "};":
					skip = false
				case !skip:
					out = append(out, l)
				}
			}
			return strings.Join(out, "\n")
		})
		if err := eventually(hang, 200*time.Millisecond, func() error {
			if strings.Contains(corp.Pods[0].Log.String(), "reconfiguring") || strings.Contains(corp.Pods[0].Log.String(), "reloading configuration succeeded") {
				return nil
			}
			return fmt.Errorf("corp-0 did not reload")
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // the agent's apply and rndc reconfig
		signed, refused, took = try("control")
		t.Logf("control (no server statements): retry signed=%v; the relay: %s; on the relay after %v (0: not within 20 s)", signed, refused, took.Round(time.Millisecond))
		if signed {
			t.Errorf("without server statements BIND signed the TCP retry: the statements would be unneeded; revisit docs/multi-cluster.md")
		}
		corp.swap(r)
	})
}

// checkSignedRetries: every NOTIFY that corp-0 retried over TCP to addr went
// out signed: BIND logs "sending notify(...) to addr#53 : TSIG (key)" for
// each attempt; an unsigned one is logged without the TSIG part.
func checkSignedRetries(t *testing.T, p *Pod, addr string) {
	t.Helper()
	var sends, unsigned []string
	retries := 0
	for _, l := range strings.Split(p.Log.String(), "\n") {
		if !strings.Contains(l, addr+"#") {
			continue
		}
		if strings.Contains(l, "retrying over TCP") {
			retries++
		}
		if strings.Contains(l, "sending notify") {
			sends = append(sends, l)
			if !strings.Contains(l, "TSIG") {
				unsigned = append(unsigned, l)
			}
		}
	}
	t.Logf("%s: %d NOTIFYs sent to %s, %d retried over TCP, %d unsigned", p.Name, len(sends), addr, retries, len(unsigned))
	if len(unsigned) > 0 {
		t.Errorf("%s sent unsigned NOTIFYs to %s:\n%s", p.Name, addr, strings.Join(unsigned, "\n"))
	}
}

// startRemoteQueryLoop queries every pod for a record of each replicated
// zone, as startQueryLoop does for the lab's own cluster.
func startRemoteQueryLoop(pods []*Pod) *queryLoop {
	probes := []struct{ name, want string }{{"www.apps.example.org", "192.0.2.80"}, {"www.legacy.example.org", "192.0.2.81"}}
	return startLoop(pods, 20*time.Millisecond, func(p *Pod, i int) string {
		pr := probes[i%len(probes)]
		return errText(expect(p.Net.IP, pr.name, dns.TypeA, q{tcp: i%4 >= 2, wait: hang}, dns.RcodeSuccess, []string{pr.want}))
	})
}

// configMapData is the data of each of a rendered cluster's ConfigMaps, by name.
func configMapData(c *testutil.Cluster) map[string]map[string]string {
	out := map[string]map[string]string{}
	for name, cm := range c.ConfigMaps {
		out[name] = cm.Data
	}
	return out
}
