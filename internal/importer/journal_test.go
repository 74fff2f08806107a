package importer_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestJournalCarried: the corpus's dynamic server has UPDATEs in three
// journals written by named (nsupdate against it: a lease added and one
// expired in dhcp.corp.example and the reverse zone, whose journal option
// puts the journal elsewhere; a service added to svc.corp.example). Read
// by BIND (named-checkzone -j, -J for the journal option), the zones are
// imported as named serves them, with the journal's serial; read by
// miekg/dns, which reads files only, each journal is a loss that names the
// commands that carry it.
func TestJournalCarried(t *testing.T) {
	conf := filepath.Join("testdata", "corpus", "dynamic", "named.conf")
	journaled := []string{"20.172.in-addr.arpa", "dhcp.corp.example", "svc.corp.example"}

	t.Run("BIND", func(t *testing.T) {
		res := importResult(t, conf)
		names := map[string][]string{}
		for _, o := range res.Objects["zones.yaml"] {
			z := o.(*v1alpha1.BindZone)
			for _, r := range z.Spec.Records {
				names[z.Spec.ZoneName] = append(names[z.Spec.ZoneName], r.Name+" "+r.Type)
			}
		}
		want := map[string][]string{
			"20.172.in-addr.arpa": {"23.1 PTR", "42.1 PTR"},
			"apps.corp.example":   {"_http._tcp.api SRV", "api A"},
			"dhcp.corp.example":   {"laptop-23 A", "laptop-23 TXT", "laptop-42 A", "laptop-42 TXT"},
			"svc.corp.example":    {"printer A", "queue A"},
		}
		for _, l := range names {
			sort.Strings(l)
		}
		if d := cmp.Diff(want, names); d != "" {
			t.Errorf("the zones are not imported as named serves them, file and journal (-want +got):\n%s", d)
		}
		for _, z := range journaled {
			if s, _ := res.ServedSerial("", z); s != 1043 {
				t.Errorf("zone %s: served serial %d, want the journal's 1043 (the file says 1042)", z, s)
			}
		}
		for _, l := range res.Losses {
			if strings.Contains(l.Why, "journal") {
				t.Errorf("BIND's reader applies the journal, yet: %s", l)
			}
		}
	})

	t.Run("miekg", func(t *testing.T) {
		dir := filepath.Dir(conf)
		stmts, err := namedconf.ReadConf(conf, dir, os.ReadFile)
		if err != nil {
			t.Fatal(err)
		}
		res, err := importer.Import(stmts, importer.Options{ZoneDir: importer.ZoneDir(stmts, dir), Read: os.ReadFile,
			Exists: func(p string) bool { _, err := os.Stat(p); return err == nil }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := res.Check(&testutil.DetRand{}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range res.Losses {
			if strings.Contains(l.Why, "has a journal") {
				got = append(got, l.Where+" "+strings.Fields(l.Why)[1]+" "+strings.Fields(l.Why)[5])
				if !strings.Contains(l.Why, "rndc sync -clean") || !strings.Contains(l.Why, "bind-fn import --axfr SERVER --zone") {
					t.Errorf("the loss does not name the commands that carry the journal: %s", l)
				}
			}
		}
		sort.Strings(got)
		want := []string{
			"testdata/corpus/dynamic/named.conf:29 dhcp.corp.example (testdata/corpus/dynamic/zones/dyn/db.dhcp.corp.example.jnl):",
			"testdata/corpus/dynamic/named.conf:36 20.172.in-addr.arpa (testdata/corpus/dynamic/zones/dyn/172.20.journal):",
			"testdata/corpus/dynamic/named.conf:51 svc.corp.example (testdata/corpus/dynamic/zones/dyn/db.svc.corp.example.jnl):",
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("each journal read around is a loss at its zone's file (-want +got):\n%s", d)
		}
	})
}
