package multipod

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// edLargeRecords is the size the issue asks for: a dynamic zone of 10,000
// records, whose TSIG-signed AXFR takes many messages (external-dns#6732
// reports verification failures on such transfers).
const edLargeRecords = 10000

// scenarioExternalDNSLarge: the dynamic zone grows to 10,000 records by
// TSIG-signed UPDATE (1,000 per message), then the real external-dns runs
// its create pass against it: it lists the zone by TSIG-signed AXFR (many
// messages, each signed), plans, and updates. Asserted: the transfer is
// multi-message and verifies with the key (miekg/dns checks every
// message's TSIG), external-dns exits 0 and every pod serves its records
// and still the 10,000. Times are logged.
func scenarioExternalDNSLarge(t *testing.T, c *Cluster, bin string) {
	key := c.tsig(t, "externaldns-key-tsig")
	t0 := time.Now()
	for start := 0; start < edLargeRecords; start += 1000 {
		err := update(c.PrimarySvc, appsZone, key, func(m *dns.Msg) {
			var rrs []dns.RR
			for i := start; i < start+1000; i++ {
				rrs = append(rrs, mustRR(fmt.Sprintf("big-%d.%s 300 IN A 198.18.%d.%d", i, dns.Fqdn(appsZone), 100+i/250, 1+i%250)))
			}
			m.Insert(rrs)
		})
		if err != nil {
			t.Fatalf("adding records %d..%d: %v", start, start+999, err)
		}
	}
	t.Logf("%d records added to %s in %d UPDATE messages in %v", edLargeRecords, appsZone, edLargeRecords/1000, time.Since(t0).Round(time.Millisecond))

	// The transfer external-dns will make, verified message by message.
	tr := &dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 10 * time.Second, TsigSecret: map[string]string{dns.Fqdn(key.Name): key.Secret}}
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(appsZone))
	m.SetTsig(dns.Fqdn(key.Name), dns.HmacSHA256, 300, time.Now().Unix())
	ch, err := tr.In(m, c.PrimarySvc+":53")
	if err != nil {
		t.Fatalf("AXFR %s: %v", appsZone, err)
	}
	msgs, rrs := 0, 0
	for env := range ch {
		if env.Error != nil {
			t.Fatalf("AXFR %s, message %d: %v", appsZone, msgs+1, env.Error)
		}
		msgs++
		rrs += len(env.RR)
	}
	if msgs < 2 || rrs < edLargeRecords {
		t.Fatalf("AXFR %s: %d records in %d messages, want over %d in several", appsZone, rrs, msgs, edLargeRecords)
	}
	t.Logf("TSIG-signed AXFR of %s: %d records in %d messages, every message verified", appsZone, rrs, msgs)

	conn := startConnector(t)
	pass := externalDNSPasses()[0]
	run := runExternalDNS(t, bin, c, conn, pass)
	var vis []string
	for _, p := range c.Pods {
		vis = append(vis, fmt.Sprintf("%s %v", p.Name, run.visible[p.Name].Round(time.Millisecond)))
	}
	t.Logf("external-dns (%s pass) against the %d-record zone: ran %v; its records served: %s", pass.name, rrs, run.took.Round(time.Millisecond), strings.Join(vis, ", "))
	var pl tcpPoller
	defer pl.close()
	last := fmt.Sprintf("big-%d.%s", edLargeRecords-1, appsZone)
	for _, p := range c.Pods {
		if !pl.has(p.Net.IP, last, dns.TypeA, fmt.Sprintf("198.18.%d.%d", 100+(edLargeRecords-1)/250, 1+(edLargeRecords-1)%250)) {
			t.Errorf("%s no longer serves %s after external-dns ran", p.Name, last)
		}
	}
	// Leave the zone as the later scenarios expect it: external-dns's
	// delete pass (against the large zone too), then the records removed.
	del := runExternalDNS(t, bin, c, conn, externalDNSPasses()[2])
	t.Logf("external-dns (delete pass) against the %d-record zone: ran %v", rrs, del.took.Round(time.Millisecond))
	for start := 0; start < edLargeRecords; start += 1000 {
		err := update(c.PrimarySvc, appsZone, key, func(m *dns.Msg) {
			var rrs []dns.RR
			for i := start; i < start+1000; i++ {
				rrs = append(rrs, &dns.A{Hdr: dns.RR_Header{Name: fmt.Sprintf("big-%d.%s", i, dns.Fqdn(appsZone)), Rrtype: dns.TypeA, Class: dns.ClassINET}})
			}
			m.RemoveRRset(rrs)
		})
		if err != nil {
			t.Fatalf("removing records %d..%d: %v", start, start+999, err)
		}
	}
}
