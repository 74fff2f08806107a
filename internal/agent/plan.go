package agent

// What a change of the mounted files makes named do. A full `rndc reload`
// rebuilds every view (a reconfig) and then re-reads every zone file, on
// every pod, for any change: a DNSRecord (the dynamic zone's desired
// records, which named never reads: the agent converges them by UPDATE)
// or one static zone's record (which only the pods that load that file
// from the mount need; the secondaries transfer it). The agent instead
// compares what named reads before and after the change — the active
// named.conf and every other file it includes, agent.json as far as it
// shapes those files, and each zone file named loads itself — and asks
// named for exactly that: nothing, `rndc reload ZONE IN VIEW` per changed
// zone file, or `rndc reconfig` (then those zone reloads) when the
// configuration itself changed. named-checkconf runs before any rndc.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// ZoneKey names one zone statement: its zone and view ("" without views).
type ZoneKey struct {
	Zone, View string
}

func (k ZoneKey) String() string {
	if k.View == "" {
		return k.Zone
	}
	return k.Zone + "/" + k.View
}

// Snapshot is what named reads, hashed, at one moment.
type Snapshot struct {
	// Config hashes everything named reads except the zone files of Zones:
	// the active named.conf and the files beside it, the key, rndc and
	// DNSSEC mounts, and agent.json without its dynamic records.
	Config string
	// Zones are the zones named loads from a file only it reads (type
	// primary, no dynamic update), each with its file's content hash
	// ($INCLUDEd parts inlined).
	Zones map[ZoneKey]string
}

// Plan is what to run for a change.
type Plan struct {
	// Reconfig: named-checkconf, then `rndc reconfig`.
	Reconfig bool
	// Reload are the zones to reload one by one (`rndc reload ZONE IN
	// VIEW`), after the reconfig if there is one, sorted.
	Reload []ZoneKey
}

// Empty reports a change named has nothing to load for (a DNSRecord: the
// agent converges it by UPDATE).
func (p Plan) Empty() bool { return !p.Reconfig && len(p.Reload) == 0 }

// PlanChange compares what named runs with (applied) to the files now
// (next). A changed configuration, or a zone added or removed, needs a
// reconfig; a zone whose file changed needs its own reload (a reconfig
// loads only new zones).
func PlanChange(applied, next Snapshot) Plan {
	var p Plan
	p.Reconfig = applied.Config != next.Config || len(applied.Zones) != len(next.Zones)
	for k, h := range next.Zones {
		old, ok := applied.Zones[k]
		switch {
		case !ok:
			p.Reconfig = true // a new zone: the reconfig loads it
		case old != h:
			p.Reload = append(p.Reload, k)
		}
	}
	sort.Slice(p.Reload, func(i, j int) bool {
		if p.Reload[i].Zone != p.Reload[j].Zone {
			return p.Reload[i].Zone < p.Reload[j].Zone
		}
		return p.Reload[i].View < p.Reload[j].View
	})
	return p
}

// FileZone is a zone statement named loads from a file it only reads.
type FileZone struct {
	ZoneKey
	File string
}

// FileZones are conf's zones of type primary (or master) with a file and
// neither allow-update nor update-policy: the zones whose file named
// re-reads on `rndc reload`. A dynamic zone's file is named's own; a
// secondary's is what it transferred.
func FileZones(conf string) ([]FileZone, error) {
	stmts, err := namedconf.ParseStatements(conf)
	if err != nil {
		return nil, err
	}
	var out []FileZone
	var walk func(stmts []namedconf.Stmt, view string)
	walk = func(stmts []namedconf.Stmt, view string) {
		for _, s := range stmts {
			if !s.Block || len(s.Words) < 2 {
				continue
			}
			switch s.Words[0].Text {
			case "view":
				walk(s.Body, s.Words[1].Text)
			case "zone":
				if fz, ok := fileZone(s, view); ok {
					out = append(out, fz)
				}
			}
		}
	}
	walk(stmts, "")
	return out, nil
}

// locatedFileZones is FileZones of a configuration read with its includes
// (namedconf.ReadConf).
func locatedFileZones(stmts []namedconf.Located) []FileZone {
	var out []FileZone
	var walk func(stmts []namedconf.Located, view string)
	walk = func(stmts []namedconf.Located, view string) {
		for _, l := range stmts {
			if !l.Block || len(l.Words) < 2 {
				continue
			}
			switch l.Words[0].Text {
			case "view":
				walk(l.Body, l.Words[1].Text)
			case "zone":
				s := l.Stmt
				for _, b := range l.Body {
					s.Body = append(s.Body, b.Stmt)
				}
				if fz, ok := fileZone(s, view); ok {
					out = append(out, fz)
				}
			}
		}
	}
	walk(stmts, "")
	return out
}

func fileZone(s namedconf.Stmt, view string) (FileZone, bool) {
	var typ, file string
	dynamic := false
	for _, o := range s.Body {
		if len(o.Words) == 0 {
			continue
		}
		switch o.Words[0].Text {
		case "type":
			if len(o.Words) > 1 {
				typ = o.Words[1].Text
			}
		case "file":
			if len(o.Words) > 1 {
				file = o.Words[1].Text
			}
		case "allow-update", "update-policy":
			dynamic = true
		}
	}
	if (typ != "primary" && typ != "master") || file == "" || dynamic {
		return FileZone{}, false
	}
	return FileZone{ZoneKey: ZoneKey{Zone: strings.TrimSuffix(s.Words[1].Text, "."), View: view}, File: file}, true
}

// configForNamed is agent.json as far as named sees it: the dynamic zones'
// records (and where they are read from) are the agent's alone.
func configForNamed(cfg *layout.AgentConfigDoc) ([]byte, error) {
	c := *cfg
	c.DynamicZones = nil
	for _, z := range cfg.DynamicZones {
		z.Records, z.Source = nil, ""
		c.DynamicZones = append(c.DynamicZones, z)
	}
	return json.Marshal(&c)
}

// snapshot hashes what named reads now (after prepare or refreshSeeds has
// written the agent's own files).
func (a *Agent) snapshot(cfg *layout.AgentConfigDoc) (Snapshot, error) {
	h := sha256.New()
	doc, err := configForNamed(cfg)
	if err != nil {
		return Snapshot{}, err
	}
	fmt.Fprintf(h, "agent.json %x\n", sha256.Sum256(doc))
	active := a.checkTarget()
	conf, err := os.ReadFile(active)
	if err != nil {
		return Snapshot{}, fmt.Errorf("cannot read the active config: %w", err)
	}
	fmt.Fprintf(h, "conf %s %x\n", active, sha256.Sum256(conf))
	// Beside the active named.conf: what it may include (the other role's
	// config and agent.json are not named's).
	dir := filepath.Dir(a.opt.ConfigFile)
	names, err := visibleNames(dir)
	if err != nil {
		return Snapshot{}, err
	}
	skip := []string{filepath.Base(a.opt.ConfigFile), filepath.Base(cfg.PrimaryConf), filepath.Base(cfg.SecondaryConf)}
	for _, n := range names {
		if slices.Contains(skip, n) || strings.Contains(n, ".tmp-") {
			continue
		}
		p := filepath.Join(dir, n)
		var fh string
		if fi, serr := os.Stat(p); serr == nil && fi.Mode().IsRegular() {
			var b []byte
			b, err = os.ReadFile(p)
			fh = fmt.Sprintf("%x", sha256.Sum256(b))
		} else {
			fh, err = TreeHash(p)
		}
		if err != nil {
			return Snapshot{}, err
		}
		fmt.Fprintf(h, "beside %s %s\n", n, fh)
	}
	rest, err := TreeHash(a.opt.KeysDir, a.opt.RNDCDir, a.dnssecDir())
	if err != nil {
		return Snapshot{}, err
	}
	fmt.Fprintf(h, "mounts %s\n", rest)
	// The zone statements are in the zones ConfigMaps' files named.conf
	// includes (docs/state.md#shards): every included file is hashed as
	// configuration. A file that cannot be read (named-checkconf locates
	// it) leaves the zones of the active file alone, and the plan
	// reconfigures.
	stmts, err := namedconf.ReadConf(active, filepath.Dir(active), func(p string) ([]byte, error) {
		b, rerr := os.ReadFile(p)
		if rerr == nil && p != active {
			fmt.Fprintf(h, "include %s %x\n", p, sha256.Sum256(b))
		}
		return b, rerr
	})
	var zones []FileZone
	if err != nil {
		fmt.Fprintf(h, "unreadable include %s\n", err)
		if zones, err = FileZones(string(conf)); err != nil {
			return Snapshot{}, fmt.Errorf("cannot read %s: %w", active, err)
		}
	} else {
		zones = locatedFileZones(stmts)
	}
	s := Snapshot{Zones: map[ZoneKey]string{}}
	for _, z := range zones {
		b, err := ReadZoneText(z.File)
		if err != nil {
			// named-checkconf locates it; the plan reconfigures.
			fmt.Fprintf(h, "unreadable %s %s\n", z.ZoneKey, err)
			continue
		}
		s.Zones[z.ZoneKey] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	s.Config = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// reloadArgs are rndc's arguments to reload one zone.
func reloadArgs(k ZoneKey) []string {
	args := []string{"reload", k.Zone}
	if k.View != "" {
		args = append(args, "IN", k.View)
	}
	return args
}
