package multipod

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// outsideSecondary is a plain named outside the rendered cluster, a
// secondary of one zone (as an ISP's or another site's secondary is): it
// transfers from the original first, then from the rendered primary.
type outsideSecondary struct {
	lab       *Lab
	n         *Netns
	dir, zone string
	key       TSIG
	proc      *Proc
	log       *syncLog
}

// startOutsideSecondary runs named at ip as a secondary of zone from
// primary, transfers signed with key; its zone file stays on disk across
// restarts (it keeps the serial it holds).
func (l *Lab) startOutsideSecondary(t *testing.T, name, ip, zone, primary string, key TSIG) *outsideSecondary {
	t.Helper()
	o := &outsideSecondary{lab: l, n: l.addNetns(name, ip), dir: filepath.Join(l.dir, name), zone: zone, key: key}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	o.start(t, primary)
	return o
}

// start writes named.conf with primary as the zone's only primary and
// starts named.
func (o *outsideSecondary) start(t *testing.T, primary string) {
	t.Helper()
	conf := fmt.Sprintf(`key %q { algorithm hmac-sha256; secret %q; };
options {
	directory %q;
	pid-file "named.pid";
	session-keyfile "session.key";
	listen-on { %s; };
	listen-on-v6 { none; };
	recursion no;
	dnssec-validation no;
	notify no;
};
zone %q {
	type secondary;
	primaries { %s key %q; };
	file "secondary.db";
};
`, o.key.Name, o.key.Secret, o.dir, o.n.IP, o.zone, primary, o.key.Name)
	if err := os.WriteFile(filepath.Join(o.dir, "named.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	o.log = &syncLog{}
	o.proc = o.lab.startProc(o.n, "", []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"},
		[]string{mustLook(t, "named"), "-g", "-c", filepath.Join(o.dir, "named.conf")}, o.log)
}

// switchTo stops named, points the zone at a new primary and starts it
// again: it loads the serial it holds from its file, then asks the new
// primary for the SOA.
func (o *outsideSecondary) switchTo(t *testing.T, primary string) {
	t.Helper()
	o.proc.kill(syscall.SIGTERM)
	o.start(t, primary)
}

// waitSerial waits until server serves zone with serial want (the hang
// bound), and fails with what it served otherwise.
func waitSerial(t *testing.T, who, server, zone string, want uint32, log *syncLog) {
	t.Helper()
	var last string
	err := eventually(hang, 200*time.Millisecond, func() error {
		m, err := query(server, zone, dns.TypeSOA, q{tcp: true})
		if err != nil {
			last = err.Error()
			return err
		}
		for _, rr := range m.Answer {
			if soa, ok := rr.(*dns.SOA); ok {
				last = fmt.Sprintf("serial %d", soa.Serial)
				if soa.Serial == want {
					return nil
				}
			}
		}
		if last == "" {
			last = fmt.Sprintf("no SOA (%s)", dns.RcodeToString[m.Rcode])
		}
		return fmt.Errorf("%s", last)
	})
	if err != nil {
		tail := ""
		if log != nil {
			tail = "\n" + log.tail(40)
		}
		t.Fatalf("%s (%s) does not serve %s with serial %d: %s%s", who, server, zone, want, last, tail)
	}
}

// answerHas waits until server answers name/qtype with an RR whose text
// ends in value.
func answerHas(t *testing.T, who, server, name string, qtype uint16, value string) {
	t.Helper()
	var last string
	err := eventually(hang, 200*time.Millisecond, func() error {
		m, err := query(server, name, qtype, q{tcp: true})
		if err != nil {
			return err
		}
		last = answerText(m)
		for _, rr := range m.Answer {
			if strings.HasSuffix(rr.String(), value) {
				return nil
			}
		}
		return fmt.Errorf("no %s", value)
	})
	if err != nil {
		t.Fatalf("%s (%s) does not answer %s %s with %s: %s", who, server, name, dns.TypeToString[qtype], value, last)
	}
}
