package importer

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// ianaRoots are the root servers BIND's built-in hints name
// (a.root-servers.net. to m.root-servers.net.).
var ianaRoots = func() []string {
	var out []string
	for c := 'a'; c <= 'm'; c++ {
		out = append(out, string(c)+".root-servers.net.")
	}
	return out
}()

// hint is a zone "." { type hint; } statement, judged once the views'
// recursion is known (only a recursive view reads its hints).
type hint struct {
	stmt namedconf.Located
	view string
	file string
}

// hintNS reads the NS names a hint file gives the root (miekg/dns reads
// it: a hint file holds NS and address records, no SOA named-checkzone
// would want).
func (im *importer) hintNS(file string) ([]string, error) {
	b, err := im.opt.Read(im.zonePath(file))
	if err != nil {
		return nil, err
	}
	zp := dns.NewZoneParser(strings.NewReader(string(b)), ".", im.zonePath(file))
	zp.SetDefaultTTL(3600000) // a hint's TTLs are not carried; files often lack $TTL
	var ns []string
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		if n, isNS := rr.(*dns.NS); isNS && n.Hdr.Name == "." {
			ns = append(ns, strings.ToLower(n.Ns))
		}
	}
	if err := zp.Err(); err != nil {
		return nil, err
	}
	sort.Strings(ns)
	return slices.Compact(ns), nil
}

// judgeHints: bind-fn renders BIND's built-in hints. A recursive view
// whose hint file names the IANA root servers loses nothing (BIND primes
// from the root itself); one whose hints name other servers (a private
// root) would start its recursion at the real root instead: a loss.
func (im *importer) judgeHints(recursive func(view string) bool) {
	for _, h := range im.hints {
		if !recursive(h.view) {
			im.replaced(h.stmt, "root hints of a view that does not recurse: nothing reads them")
			continue
		}
		ns, err := im.hintNS(h.file)
		switch {
		case err != nil:
			im.lose(h.stmt, fmt.Sprintf("cannot read the root hints (%v): bind-fn renders BIND's built-in hints, which may not be these", err))
		case slices.Equal(ns, ianaRoots):
			im.replaced(h.stmt, "root hints: BIND's built-in hints name the same root servers")
		default:
			im.lose(h.stmt, fmt.Sprintf("root hints naming %s, not the IANA root servers: bind-fn renders BIND's built-in hints, so recursion would start at the real root instead of this private one (a forward zone \".\" to these servers is the nearest bind-fn form)", strings.Join(ns, ", ")))
		}
	}
}
