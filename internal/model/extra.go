package model

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// ownedOptions are statements bind-fn renders itself, or that would move the
// server's files, keys or control channel: extraOptions may not set them.
var ownedOptions = map[string]string{
	"include": "", "directory": "", "pid-file": "", "session-keyfile": "", "key-directory": "",
	"managed-keys-directory": "", "dump-file": "", "statistics-file": "", "memstatistics-file": "",
	"bindkeys-file": "", "secroots-file": "", "recursing-file": "", "geoip-directory": "",
	"listen-on": "spec.ipv6", "listen-on-v6": "spec.ipv6", "version": "",
	"allow-query": "spec.allowQuery", "recursion": "spec.mode", "allow-recursion": "spec.allowRecursion",
	"forwarders": "spec.forwarders", "forward": "spec.forwardOnly", "dnssec-validation": "spec.dnssecValidation",
	"allow-transfer": "BindZone.spec.allowTransfer", "allow-update": "BindZone.spec.dynamicUpdate",
	"allow-update-forwarding": "", "update-policy": "",
	"notify": "", "also-notify": "BindZone.spec.alsoNotify", "allow-notify": "", "notify-rate": "",
	"startup-notify-rate": "", "serial-query-rate": "", "notify-delay": "", "notify-source": "", "notify-source-v6": "",
	"querylog": "spec.queryLogging", "rate-limit": "spec.rateLimit", "catalog-zones": "BindCatalogZone",
	"response-policy": "BindPolicy", "controls": "", "key": "BindTSIGKey", "acl": "BindACL", "zone": "BindZone",
	"view": "BindView", "logging": "", "options": "", "server": "", "primaries": "", "masters": "",
	"remote-servers": "", "dnssec-policy": "BindDNSSECPolicy", "statistics-channels": "", "trust-anchors": "",
	"trusted-keys": "", "managed-keys": "", "tls": "", "http": "", "dnstap-output": "", "plugin": "",
	"transfer-source": "", "transfer-source-v6": "", "query-source": "", "query-source-v6": "",
	"transfers-in": "", "transfers-per-ns": "", "transfers-out": "", "tcp-clients": "", "allow-new-zones": "", "new-zones-directory": "",
}

// Owned reports whether bind-fn renders an option itself (extraOptions may
// not set it), and which field sets it instead ("" when none: bind-fn's
// choice). The importer reads this table too: what the model owns, an
// import replaces or carries, never copies.
func Owned(name string) (field string, ok bool) {
	field, ok = ownedOptions[name]
	return field, ok
}

// optKind is the shape of an option's value that ParseExtraOptions checks.
type optKind uint8

const (
	optAny optKind = iota // a list, a block, or a value of several forms: left to BIND
	optBool
	optNumber
	optString
	optDuration
	optSize
	optSizeOrPercent
	optPercent
)

// knownOptions are the statements the options clause of both BIND 9.18 and
// BIND 9.20 accepts (neither deprecated nor obsolete in either), with the
// shape of their value. The list was read from named-checkconf 9.18.49 and
// 9.20.30 (each name with a bad value gives an error other than "unknown
// option"); TestKnownOptionsBIND checks it against both releases.
var knownOptions = map[string]optKind{
	"allow-new-zones":                   optBool,
	"allow-notify":                      optAny,
	"allow-query":                       optAny,
	"allow-query-cache":                 optAny,
	"allow-query-cache-on":              optAny,
	"allow-query-on":                    optAny,
	"allow-recursion":                   optAny,
	"allow-recursion-on":                optAny,
	"allow-transfer":                    optAny,
	"allow-update":                      optAny,
	"allow-update-forwarding":           optAny,
	"also-notify":                       optAny,
	"answer-cookie":                     optBool,
	"attach-cache":                      optAny,
	"auth-nxdomain":                     optBool,
	"automatic-interface-scan":          optBool,
	"bindkeys-file":                     optString,
	"blackhole":                         optAny,
	"catalog-zones":                     optAny,
	"check-dup-records":                 optAny,
	"check-integrity":                   optBool,
	"check-mx":                          optAny,
	"check-mx-cname":                    optAny,
	"check-names":                       optAny,
	"check-sibling":                     optBool,
	"check-spf":                         optAny,
	"check-srv-cname":                   optAny,
	"check-wildcard":                    optBool,
	"clients-per-query":                 optNumber,
	"cookie-algorithm":                  optAny,
	"cookie-secret":                     optAny,
	"deny-answer-addresses":             optAny,
	"deny-answer-aliases":               optAny,
	"directory":                         optString,
	"disable-algorithms":                optAny,
	"disable-ds-digests":                optAny,
	"disable-empty-zone":                optAny,
	"dns64":                             optAny,
	"dns64-contact":                     optAny,
	"dns64-server":                      optAny,
	"dnssec-accept-expired":             optBool,
	"dnssec-loadkeys-interval":          optNumber,
	"dnssec-policy":                     optAny,
	"dnssec-validation":                 optBool,
	"dnstap":                            optAny,
	"dnstap-identity":                   optString,
	"dnstap-output":                     optAny,
	"dnstap-version":                    optString,
	"dual-stack-servers":                optAny,
	"dump-file":                         optString,
	"edns-udp-size":                     optNumber,
	"empty-contact":                     optAny,
	"empty-server":                      optAny,
	"empty-zones-enable":                optBool,
	"fetch-quota-params":                optAny, // an integer and three fixed-point numbers
	"fetches-per-server":                optAny, // a second word too (named-checkconf)
	"fetches-per-zone":                  optAny, // a second word too (named-checkconf)
	"flush-zones-on-shutdown":           optBool,
	"forward":                           optAny,
	"forwarders":                        optAny,
	"fstrm-set-buffer-hint":             optNumber,
	"fstrm-set-flush-timeout":           optNumber,
	"fstrm-set-input-queue-size":        optNumber,
	"fstrm-set-output-notify-threshold": optNumber,
	"fstrm-set-output-queue-model":      optAny,
	"fstrm-set-output-queue-size":       optNumber,
	"fstrm-set-reopen-interval":         optDuration,
	"geoip-directory":                   optString,
	"hostname":                          optString,
	"http-listener-clients":             optNumber,
	"http-port":                         optNumber,
	"http-streams-per-connection":       optNumber,
	"https-port":                        optNumber,
	"include":                           optString,
	"interface-interval":                optDuration,
	"ipv4only-contact":                  optAny,
	"ipv4only-enable":                   optBool,
	"ipv4only-server":                   optAny,
	"ixfr-from-differences":             optBool,
	"key-directory":                     optString,
	"lame-ttl":                          optDuration,
	"listen-on":                         optAny,
	"listen-on-v6":                      optAny,
	"lmdb-mapsize":                      optSize,
	"managed-keys-directory":            optString,
	"masterfile-format":                 optAny,
	"masterfile-style":                  optAny,
	"match-mapped-addresses":            optBool,
	"max-cache-size":                    optSizeOrPercent,
	"max-cache-ttl":                     optDuration,
	"max-clients-per-query":             optNumber,
	"max-ixfr-ratio":                    optPercent,
	"max-journal-size":                  optSize,
	"max-ncache-ttl":                    optDuration,
	"max-query-count":                   optNumber,
	"max-query-restarts":                optNumber,
	"max-records":                       optNumber,
	"max-records-per-type":              optNumber,
	"max-recursion-depth":               optNumber,
	"max-recursion-queries":             optNumber,
	"max-refresh-time":                  optNumber,
	"max-retry-time":                    optNumber,
	"max-rsa-exponent-size":             optNumber,
	"max-stale-ttl":                     optDuration,
	"max-transfer-idle-in":              optNumber,
	"max-transfer-idle-out":             optNumber,
	"max-transfer-time-in":              optNumber,
	"max-transfer-time-out":             optNumber,
	"max-types-per-name":                optNumber,
	"max-udp-size":                      optNumber,
	"memstatistics":                     optBool,
	"memstatistics-file":                optString,
	"message-compression":               optBool,
	"min-cache-ttl":                     optDuration,
	"min-ncache-ttl":                    optDuration,
	"min-refresh-time":                  optNumber,
	"min-retry-time":                    optNumber,
	"minimal-any":                       optBool,
	"minimal-responses":                 optBool,
	"multi-master":                      optBool,
	"new-zones-directory":               optString,
	"no-case-compress":                  optAny,
	"nocookie-udp-size":                 optNumber,
	"notify":                            optBool,
	"notify-delay":                      optNumber,
	"notify-rate":                       optNumber,
	"notify-source":                     optAny,
	"notify-source-v6":                  optAny,
	"notify-to-soa":                     optBool,
	"nsec3-test-zone":                   optBool,
	"nta-lifetime":                      optDuration,
	"nta-recheck":                       optDuration,
	"nxdomain-redirect":                 optAny,
	"parental-source":                   optAny,
	"parental-source-v6":                optAny,
	"pid-file":                          optString,
	"port":                              optNumber,
	"preferred-glue":                    optAny,
	"prefetch":                          optAny, // a second word too (named-checkconf)
	"provide-ixfr":                      optBool,
	"qname-minimization":                optAny,
	"query-source":                      optAny,
	"query-source-v6":                   optAny,
	"querylog":                          optBool,
	"rate-limit":                        optAny,
	"recursing-file":                    optString,
	"recursion":                         optBool,
	"recursive-clients":                 optNumber,
	"request-expire":                    optBool,
	"request-ixfr":                      optBool,
	"request-nsid":                      optBool,
	"require-server-cookie":             optBool,
	"resolver-query-timeout":            optNumber,
	"response-padding":                  optAny,
	"response-policy":                   optAny,
	"reuseport":                         optBool,
	"root-key-sentinel":                 optBool,
	"rrset-order":                       optAny,
	"secroots-file":                     optString,
	"send-cookie":                       optBool,
	"serial-query-rate":                 optNumber,
	"serial-update-method":              optAny,
	"server-id":                         optString,
	"servfail-ttl":                      optDuration,
	"session-keyalg":                    optAny,
	"session-keyfile":                   optString,
	"session-keyname":                   optAny,
	"sig-signing-nodes":                 optNumber,
	"sig-signing-signatures":            optNumber,
	"sig-signing-type":                  optNumber, // a second word too (named-checkconf)
	"stale-answer-client-timeout":       optNumber,
	"stale-answer-enable":               optBool,
	"stale-answer-ttl":                  optDuration,
	"stale-cache-enable":                optBool,
	"stale-refresh-time":                optDuration,
	"startup-notify-rate":               optNumber,
	"statistics-file":                   optString,
	"synth-from-dnssec":                 optBool,
	"tcp-advertised-timeout":            optNumber,
	"tcp-clients":                       optNumber,
	"tcp-idle-timeout":                  optNumber,
	"tcp-initial-timeout":               optNumber,
	"tcp-keepalive-timeout":             optNumber,
	"tcp-listen-queue":                  optNumber,
	"tcp-receive-buffer":                optNumber,
	"tcp-send-buffer":                   optNumber,
	"tkey-gssapi-keytab":                optString,
	"tls-port":                          optNumber,
	"transfer-format":                   optAny,
	"transfer-message-size":             optNumber,
	"transfer-source":                   optAny,
	"transfer-source-v6":                optAny,
	"transfers-in":                      optNumber,
	"transfers-out":                     optNumber,
	"transfers-per-ns":                  optNumber,
	"trust-anchor-telemetry":            optBool,
	"try-tcp-refresh":                   optBool,
	"udp-receive-buffer":                optNumber,
	"udp-send-buffer":                   optNumber,
	"update-quota":                      optNumber,
	"v6-bias":                           optNumber,
	"validate-except":                   optAny,
	"version":                           optString,
	"zero-no-soa-ttl":                   optBool,
	"zero-no-soa-ttl-cache":             optBool,
	"zone-statistics":                   optBool,
}

// goneIn920 are options BIND 9.18 reads and BIND 9.20, the release bind-fn
// ships, calls obsolete or deprecated (named-checkconf 9.20.30 warns
// "is obsolete and should be removed" or "is deprecated"): bind-fn renders
// one config for both releases, so extraOptions refuses them, naming the
// release and, where there is one, the replacement. TestKnownOptionsBIND
// checks every entry against both releases' named-checkconf.
var goneIn920 = map[string]struct{ how, use string }{
	"dnskey-sig-validity":       {"obsolete", "dnssec-policy's signatures-validity-dnskey (BindDNSSECPolicy)"},
	"dnssec-dnskey-kskonly":     {"obsolete", "dnssec-policy (BindDNSSECPolicy), which signs the DNSKEY set with the KSK alone"},
	"dnssec-secure-to-insecure": {"obsolete", "dnssec-policy \"insecure\" to go unsigned"},
	"dnssec-update-mode":        {"obsolete", "dnssec-policy (BindDNSSECPolicy)"},
	"keep-response-order":       {"obsolete", ""},
	"lock-file":                 {"removed (named-checkconf 9.20: \"no longer exists\"; named refuses to start)", ""},
	"max-zone-ttl":              {"deprecated", "dnssec-policy's max-zone-ttl (BindDNSSECPolicy)"},
	"sig-validity-interval":     {"obsolete", "dnssec-policy's signatures-validity (BindDNSSECPolicy)"},
	"sortlist":                  {"deprecated", ""},
	"update-check-ksk":          {"obsolete", "dnssec-policy (BindDNSSECPolicy)"},
}

// GoneIn920 lists the options extraOptions refuses because BIND 9.20 no
// longer reads them (for TestKnownOptionsBIND), sorted.
func GoneIn920() []string { return slices.Sorted(maps.Keys(goneIn920)) }

// ParseExtraOptions reads BindCluster.spec.extraOptions: each entry is one
// or more options statements, read by the named.conf lexer (the one every
// reader uses) into statements that are re-rendered through the writer,
// never pasted. A misspelt or owned option, a value of the wrong shape, a
// string that holds ; { or }, or one option set twice is a located error.
// The statements are sorted by name.
func ParseExtraOptions(src diag.Source, entries []string, rs *diag.Results) []nc.Stmt {
	out, _ := parseExtraOptions(src, entries, rs)
	return out
}

// parseExtraOptions is ParseExtraOptions, and the index of the entry that
// set each option (for errors found later, about its value).
func parseExtraOptions(src diag.Source, entries []string, rs *diag.Results) ([]nc.Stmt, map[string]int) {
	var out []nc.Stmt
	seen := map[string]int{}
	for i, text := range entries {
		field := fmt.Sprintf("spec.extraOptions[%d]", i)
		text = strings.TrimSpace(text)
		stmts, err := nc.ParseStatements(text)
		if err != nil {
			// A last statement without its ';' (the usual way to write
			// one option per entry): read it again with the ';' on a line
			// of its own, so that a trailing comment cannot swallow it.
			if more, err2 := nc.ParseStatements(text + "\n;"); err2 == nil {
				stmts, err = more, nil
			}
		}
		if err != nil {
			rs.Errorf(src, field, "cannot parse %q as options statements: %v", entries[i], err)
			continue
		}
		for _, s := range stmts {
			name := strings.ToLower(s.Name())
			if use, owned := ownedOptions[name]; owned {
				fix := "bind-fn renders it itself"
				if use != "" {
					fix = "set it through " + use
				}
				rs.Errorf(src, field, "cannot set %q in extraOptions: %s", name, fix)
				continue
			}
			if g, ok := goneIn920[name]; ok {
				fix := "remove it"
				if g.use != "" {
					fix = "use " + g.use + " instead"
				}
				rs.Errorf(src, field, "cannot set %q in extraOptions: it is %s in BIND 9.20, the release bind-fn renders for (named-checkconf 9.20 warns); %s", name, g.how, fix)
				continue
			}
			kind, known := knownOptions[name]
			if !known {
				rs.Errorf(src, field, "cannot set %q in extraOptions: BIND has no such option (named: \"unknown option\"); check the spelling against the options reference of BIND 9.20 (and 9.18: bind-fn renders one config for both)", s.Name())
				continue
			}
			if err := checkOptionValue(s, kind); err != nil {
				rs.Errorf(src, field, "cannot set %q in extraOptions: %v", name, err)
				continue
			}
			if err := checkOptionRange(s); err != nil {
				rs.Errorf(src, field, "cannot set %q in extraOptions: %v", name, err)
				continue
			}
			if j, dup := seen[name]; dup {
				rs.Errorf(src, field, "option %q is already set by spec.extraOptions[%d]", name, j)
				continue
			}
			seen[name] = i
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, seen
}

// optionRange is what BIND 9.18 and 9.20 accept for a numeric or duration
// option (named-checkconf refuses the rest: lib/isccfg/check.c's intervals
// table, port checks, bin/named's own). Each end is pinned against
// named-checkconf by TestExtraOptionRangesBIND.
type optionRange struct {
	min, max uint64
	// zero: 0 is accepted besides min..max; pow2: a power of two.
	zero, pow2 bool
	why        string
}

const maxUint32 = 1<<32 - 1

var optionRanges = map[string]optionRange{
	"dnskey-sig-validity":               {0, 3660, false, false, "days"},
	"fstrm-set-buffer-hint":             {1024, 65536, false, false, ""},
	"fstrm-set-flush-timeout":           {1, 600, false, false, "seconds"},
	"fstrm-set-input-queue-size":        {2, 1024, false, true, ""},
	"fstrm-set-output-notify-threshold": {1, maxUint32, false, false, ""},
	"fstrm-set-output-queue-size":       {2, 1024, false, false, ""},
	"fstrm-set-reopen-interval":         {1, 600, false, false, "seconds"},
	"http-port":                         {0, 65534, false, false, ""},
	"https-port":                        {0, 65534, false, false, ""},
	"port":                              {0, 65534, false, false, ""},
	"tls-port":                          {0, 65534, false, false, ""},
	"interface-interval":                {0, 40320, false, false, "minutes as a number; a duration's seconds are compared with the same limit"},
	"max-transfer-idle-in":              {0, 40320, false, false, "minutes (28 days)"},
	"max-transfer-idle-out":             {0, 40320, false, false, "minutes (28 days)"},
	"max-transfer-time-in":              {0, 40320, false, false, "minutes (28 days)"},
	"max-transfer-time-out":             {0, 40320, false, false, "minutes (28 days)"},
	"max-ncache-ttl":                    {0, 604800, false, false, "seconds (7 days)"},
	"min-cache-ttl":                     {0, 90, false, false, "seconds"},
	"min-ncache-ttl":                    {0, 90, false, false, "seconds"},
	"max-query-restarts":                {1, 255, false, false, ""},
	"max-refresh-time":                  {1, maxUint32, false, false, "seconds"},
	"max-retry-time":                    {1, maxUint32, false, false, "seconds"},
	"min-refresh-time":                  {1, maxUint32, false, false, "seconds"},
	"min-retry-time":                    {1, maxUint32, false, false, "seconds"},
	"max-rsa-exponent-size":             {35, 4096, true, false, "bits, or 0 for no limit"},
	"nta-lifetime":                      {1, 604800, false, false, "seconds (7 days)"},
	"nta-recheck":                       {0, 604800, false, false, "seconds (7 days)"},
}

// optionNumber is the number BIND compares with an option's range: the
// number itself, or a duration's seconds (ISO 8601 or TTL style).
func optionNumber(v string) (uint64, bool) {
	v = strings.ToLower(v)
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return n, true
	}
	if d, err := ParseDuration(v, false); err == nil {
		return d.Seconds, true
	}
	if !ttlStyle(v) {
		return 0, false
	}
	var total, n uint64
	for _, ch := range v {
		if ch >= '0' && ch <= '9' {
			n = n*10 + uint64(ch-'0')
			continue
		}
		total += n * map[rune]uint64{'w': 604800, 'd': 86400, 'h': 3600, 'm': 60, 's': 1}[ch]
		n = 0
	}
	return min(total, maxUint32), true
}

// checkOptionRange refuses a value out of BIND's range for the option.
func checkOptionRange(s nc.Stmt) error {
	r, ok := optionRanges[s.Name()]
	if !ok || len(s.Words) != 2 {
		return nil
	}
	n, ok := optionNumber(s.Arg(1))
	if !ok {
		return nil // the shape check reports it
	}
	in := n >= r.min && n <= r.max || r.zero && n == 0
	if in && (!r.pow2 || n&(n-1) == 0) {
		return nil
	}
	want := fmt.Sprintf("%d to %d", r.min, r.max)
	if r.zero {
		want = "0 or " + want
	}
	if r.pow2 {
		want += ", a power of two"
	}
	if r.why != "" {
		want += " (" + r.why + ")"
	}
	return fmt.Errorf("%s is out of BIND's range (named-checkconf refuses it): use %s", s.Arg(1), want)
}

// checkOptionValue checks the shape of a statement's value for the options
// whose value is one word; checkOptionRange the ranges BIND enforces on
// them. Rules between options are BIND's.
func checkOptionValue(s nc.Stmt, kind optKind) error {
	var walk func(ws []nc.Word) error
	walk = func(ws []nc.Word) error {
		for _, w := range ws {
			if w.Kind == nc.Quoted && strings.ContainsAny(w.Text, ";{}") {
				return fmt.Errorf("the string %q holds ; { or }: write one plain statement per entry", w.Text)
			}
			if w.Kind == nc.List {
				for _, it := range w.Items {
					if err := walk(it.Words); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(s.Words); err != nil {
		return err
	}
	if len(s.Words) < 2 && !s.Block {
		return fmt.Errorf("it has no value (named: \"unexpected token near ';'\")")
	}
	if kind == optAny {
		return nil
	}
	if s.Block || len(s.Words) != 2 {
		return fmt.Errorf("it takes exactly one value")
	}
	w := s.Words[1]
	v := strings.ToLower(w.Text)
	ok := w.Kind == nc.Bare
	switch kind {
	case optBool:
		ok = ok && (v == "yes" || v == "no" || v == "true" || v == "false" || v == "1" || v == "0" || boolEnums[s.Name()+" "+v])
		if !ok {
			return fmt.Errorf("%q is not a boolean: use yes or no", w.Text)
		}
	case optNumber:
		_, err := strconv.ParseUint(v, 10, 32)
		if !ok || err != nil {
			return fmt.Errorf("%q is not a number", w.Text)
		}
	case optString:
		if w.Kind != nc.Quoted {
			return fmt.Errorf("%s takes a quoted string", s.Name())
		}
	case optDuration:
		_, err := ParseDuration(v, false)
		if !ok || (err != nil && !ttlStyle(v) && !(v == "unlimited" && s.Name() == "max-zone-ttl")) {
			return fmt.Errorf("%q is not a duration: write ISO 8601 (PT1H) or a TTL (3600, 1h)", w.Text)
		}
	case optSize, optSizeOrPercent, optPercent:
		if !ok || !sizeValue(s.Name(), v, kind) {
			return fmt.Errorf("%q is not a size: write a number with an optional unit (64m, 2g)%s", w.Text, map[bool]string{true: ", unlimited or default", false: ""}[kind != optPercent])
		}
	}
	return nil
}

// boolEnums are the words besides a boolean that BIND 9.18 takes for a
// boolean option (each checked with named-checkconf).
var boolEnums = map[string]bool{
	"ixfr-from-differences primary": true, "ixfr-from-differences secondary": true,
	"ixfr-from-differences master": true, "ixfr-from-differences slave": true,
	"minimal-responses no-auth": true, "minimal-responses no-auth-recursive": true,
	"zone-statistics full": true, "zone-statistics terse": true,
}

// ttlStyle is a TTL as BIND reads one (3600, 1h, 1w2d).
func ttlStyle(v string) bool {
	if v == "" {
		return false
	}
	digits := false
	for _, ch := range v {
		switch {
		case ch >= '0' && ch <= '9':
			digits = true
		case strings.ContainsRune("wdhms", ch) && digits:
			digits = false
		default:
			return false
		}
	}
	return true
}

func sizeValue(name, v string, kind optKind) bool {
	if kind == optPercent {
		n := strings.TrimSuffix(v, "%")
		_, err := strconv.ParseUint(n, 10, 32)
		return v == "unlimited" || (err == nil && n != v)
	}
	if v == "unlimited" || v == "default" {
		// lmdb-mapsize takes a size only (named-checkconf 9.18).
		return name != "lmdb-mapsize"
	}
	if kind == optSizeOrPercent && strings.HasSuffix(v, "%") {
		_, err := strconv.ParseUint(strings.TrimSuffix(v, "%"), 10, 8)
		return err == nil
	}
	n := strings.TrimRight(v, "kmg")
	if len(v)-len(n) > 1 {
		return false
	}
	_, err := strconv.ParseUint(n, 10, 64)
	return err == nil
}

// KnownOptions lists the option names extraOptions may set (for tests and docs).
func KnownOptions() []string {
	out := slices.Sorted(maps.Keys(knownOptions))
	return out
}

// RangedOptions are the options with a range BIND enforces, sorted.
func RangedOptions() []string {
	return slices.Sorted(maps.Keys(optionRanges))
}

// OptionRange is an option's range: min, max, and whether 0 is accepted
// besides them.
func OptionRange(name string) (lo, hi uint64, zero bool) {
	r := optionRanges[name]
	return r.min, r.max, r.zero
}
