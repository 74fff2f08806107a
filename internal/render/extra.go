package render

import (
	"fmt"
	"sort"
	"strings"

	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// ownedOptions are statements bind-fn renders itself, or that would move the
// server's files, keys or control channel: extraOptions may not set them.
var ownedOptions = map[string]string{
	"include": "", "directory": "", "pid-file": "", "session-keyfile": "", "key-directory": "",
	"managed-keys-directory": "", "dump-file": "", "statistics-file": "", "memstatistics-file": "",
	"bindkeys-file": "", "secroots-file": "", "recursing-file": "", "lock-file": "", "geoip-directory": "",
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
}

// extraOptions parses spec.extraOptions; each item is one or more statements
// that are re-rendered through the writer (never pasted).
func (b *confBuilder) extraOptions() []nc.Stmt {
	var out []nc.Stmt
	seen := map[string]int{}
	for i, src := range b.c.Spec.ExtraOptions {
		field := fmt.Sprintf("spec.extraOptions[%d]", i)
		text := strings.TrimSpace(src)
		if !strings.HasSuffix(text, ";") {
			text += ";"
		}
		stmts, err := nc.ParseStatements(text)
		if err != nil {
			b.rs.Errorf(b.c.Src, field, "cannot parse %q as options statements: %v", src, err)
			continue
		}
		for _, s := range stmts {
			name := s.Name()
			if use, owned := ownedOptions[name]; owned {
				fix := "bind-fn renders it itself"
				if use != "" {
					fix = "set it through " + use
				}
				b.rs.Errorf(b.c.Src, field, "cannot set %q in extraOptions: %s", name, fix)
				continue
			}
			if j, dup := seen[name]; dup {
				b.rs.Errorf(b.c.Src, field, "option %q is already set by spec.extraOptions[%d]", name, j)
				continue
			}
			seen[name] = i
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}
