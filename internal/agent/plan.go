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
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
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

func (k ZoneKey) less(o ZoneKey) bool {
	if k.Zone != o.Zone {
		return k.Zone < o.Zone
	}
	return k.View < o.View
}

func sortKeys(ks []ZoneKey) { sort.Slice(ks, func(i, j int) bool { return ks[i].less(ks[j]) }) }

// ZoneStmt is one zone statement as named reads it.
type ZoneStmt struct {
	ZoneKey
	// Body is the statement's block, formatted: what `rndc addzone` and
	// `rndc modzone` take ("{ type primary; file ...; };").
	Body string
	// Where is the file:line named reads it from (the rendered include).
	Where string
	// Special: a catalog or response-policy zone. The view's
	// catalog-zones or response-policy statement names it, and named
	// applies those only on a reconfig.
	Special bool

	stmt namedconf.Stmt
}

// Snapshot is what named reads, hashed, at one moment.
type Snapshot struct {
	// Config hashes everything named reads except the zone statements and
	// the zone files of Zones: the active named.conf and every file it
	// includes, the files beside it, the key, rndc and DNSSEC mounts, and
	// agent.json as far as it shapes those files.
	Config string
	// Zones are the zones named loads from a file only it reads (type
	// primary, no dynamic update), each with its file's content hash
	// ($INCLUDEd parts inlined).
	Zones map[ZoneKey]string
	// Stmts are every zone statement of the config, includes followed.
	Stmts map[ZoneKey]ZoneStmt
	// NewZones: the config says allow-new-zones yes (every view), so named
	// takes `rndc addzone`, `modzone` and `delzone`.
	NewZones bool

	// frame is the config without its zone statements (views keep their
	// other statements), includes inlined: what checkZones adds the
	// zones it checks to.
	frame []namedconf.Stmt
	// nzdDirs are where named keeps the zones added by rndc (each view's
	// new-zones-directory, else the options' directory).
	nzdDirs []string
}

// Plan is what to run for a change.
type Plan struct {
	// Reconfig: named-checkconf on the whole config, then `rndc reconfig`.
	Reconfig bool
	// Delete, Add and Modify are zone statements gone, new and changed,
	// applied one zone at a time (`rndc delzone`, `addzone`, `modzone`)
	// when there is no reconfig; each sorted by zone then view.
	Delete      []ZoneKey
	Add, Modify []ZoneStmt
	// Reload are the zones to reload one by one (`rndc reload ZONE IN
	// VIEW`), after the reconfig or the zone commands, sorted.
	Reload []ZoneKey
}

// Empty reports a change named has nothing to load for (a DNSRecord: the
// agent converges it by UPDATE).
func (p Plan) Empty() bool {
	return !p.Reconfig && len(p.Reload) == 0 && len(p.Delete) == 0 && len(p.Add) == 0 && len(p.Modify) == 0
}

// ZoneOps is how many zones the plan touches one by one.
func (p Plan) ZoneOps() int { return len(p.Delete) + len(p.Add) + len(p.Modify) + len(p.Reload) }

// MaxZoneCommands is how many zone statements a change may add, remove or
// modify one `rndc` command each before the agent runs one reconfig
// instead. Each command is one rndc process and one short pause of named
// (docs/kubelet-sync.md, "One zone, one command": ~10 ms a zone against a
// reconfig that re-reads every zone statement), so beyond this many zones
// (a bulk import, a first render of many zones) one reconfig is cheaper.
const MaxZoneCommands = 200

// PlanChange compares what named runs with (applied) to the files now
// (next). A changed configuration needs a reconfig, then a reload of each
// zone whose file changed (a reconfig loads only new zones). A change of
// zone statements alone is applied zone by zone, when named allows new
// zones and the change is small; else by a reconfig too.
func PlanChange(applied, next Snapshot) Plan {
	var p Plan
	p.Reconfig = applied.Config != next.Config
	special := false
	for k, s := range next.Stmts {
		old, ok := applied.Stmts[k]
		switch {
		case !ok:
			p.Add = append(p.Add, s)
		case old.Body != s.Body:
			p.Modify = append(p.Modify, s)
		default:
			continue
		}
		special = special || s.Special || old.Special
	}
	for k, s := range applied.Stmts {
		if _, ok := next.Stmts[k]; !ok {
			p.Delete = append(p.Delete, k)
			special = special || s.Special
		}
	}
	if len(p.Add)+len(p.Modify)+len(p.Delete) > 0 && (!next.NewZones || !applied.NewZones || special || len(p.Add)+len(p.Modify)+len(p.Delete) > MaxZoneCommands) {
		p.Reconfig = true
	}
	added := map[ZoneKey]bool{}
	for _, s := range p.Add {
		added[s.ZoneKey] = true
	}
	for k, h := range next.Zones {
		old, ok := applied.Zones[k]
		switch {
		case !ok && !added[k]:
			// a zone named already had, now read from a file of its own
			// (its statement changed): the new statement loads it, and a
			// reload makes sure a modzone re-reads the file.
			if _, had := applied.Stmts[k]; had {
				p.Reload = append(p.Reload, k)
			}
		case ok && old != h:
			p.Reload = append(p.Reload, k)
		}
	}
	if p.Reconfig {
		p.reconfigure(applied)
	}
	sortKeys(p.Reload)
	sortKeys(p.Delete)
	sort.Slice(p.Add, func(i, j int) bool { return p.Add[i].less(p.Add[j].ZoneKey) })
	sort.Slice(p.Modify, func(i, j int) bool { return p.Modify[i].less(p.Modify[j].ZoneKey) })
	return p
}

// reconfigure makes p a reconfig: it applies every statement, so only the
// file reloads of zones named had before remain (a new zone is loaded by
// the reconfig).
func (p *Plan) reconfigure(applied Snapshot) {
	p.Reconfig = true
	p.Add, p.Modify, p.Delete = nil, nil, nil
	var keep []ZoneKey
	for _, k := range p.Reload {
		if _, had := applied.Zones[k]; had {
			keep = append(keep, k)
		}
	}
	p.Reload = keep
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
	if vocab.ZoneType(typ) != "primary" || file == "" || dynamic {
		return FileZone{}, false
	}
	return FileZone{ZoneKey: ZoneKey{Zone: strings.TrimSuffix(s.Words[1].Text, "."), View: view}, File: file}, true
}

// configForNamed is agent.json as far as named sees it: the dynamic
// zones' records (and where they are read from), the seeds and the
// readiness lists are the agent's alone, and what they make named read (a
// zone's statement, a seeded file) is hashed where named reads it, so
// adding a zone changes none of it.
func configForNamed(cfg *layout.AgentConfigDoc) ([]byte, error) {
	c := *cfg
	c.DynamicZones, c.SeedZones, c.DNSSECZones, c.PrimaryZones, c.SecondaryZones = nil, nil, nil, nil, nil
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
	if _, err := os.Stat(active); err != nil {
		return Snapshot{}, fmt.Errorf("cannot read the active config: %w", err)
	}
	s := Snapshot{Zones: map[ZoneKey]string{}}
	read := map[string]bool{}
	conf, err := namedconf.ReadConf(active, filepath.Dir(active), func(p string) ([]byte, error) {
		read[p] = true
		return os.ReadFile(p)
	})
	if err != nil {
		// named-checkconf locates it; the plan reconfigures.
		fmt.Fprintf(h, "unreadable config %s\n", err)
	} else if err := s.readConf(h, conf); err != nil {
		return Snapshot{}, fmt.Errorf("cannot read %s: %w", active, err)
	}
	// Beside the active named.conf: what it may read other than by
	// include (the other role's config and agent.json are not named's,
	// and what it includes is hashed above, its zone statements one by one).
	dir := filepath.Dir(a.opt.ConfigFile)
	names, err := visibleNames(dir)
	if err != nil {
		return Snapshot{}, err
	}
	skip := []string{filepath.Base(a.opt.ConfigFile), filepath.Base(cfg.PrimaryConf), filepath.Base(cfg.SecondaryConf)}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if slices.Contains(skip, n) || strings.Contains(n, ".tmp-") || read[p] {
			continue
		}
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
	rest, err := TreeHash(a.opt.KeysDir, a.opt.RNDCDir, a.dnssecDir(), a.tlsDir())
	if err != nil {
		return Snapshot{}, err
	}
	fmt.Fprintf(h, "mounts %s\n", rest)
	for k, st := range s.Stmts {
		fz, ok := fileZone(st.stmt, k.View)
		if !ok {
			continue
		}
		sum, err := a.zoneHash(fz.File)
		if err != nil {
			// named-checkconf locates it: the zone is checked before it
			// is loaded.
			s.Zones[k] = "unreadable " + err.Error()
			continue
		}
		s.Zones[k] = sum
	}
	s.Config = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// readConf hashes every statement of conf but the zone statements into h,
// in order, and keeps the zone statements in s.Stmts.
func (s *Snapshot) readConf(h io.Writer, conf []namedconf.Located) error {
	s.Stmts = map[ZoneKey]ZoneStmt{}
	s.NewZones = false
	special := map[ZoneKey]bool{}
	var views []string
	newZones := map[string]bool{} // view ("" the options) → allow-new-zones yes
	nzd := map[string]string{}    // view ("" the options) → new-zones-directory
	directory := ""
	var walk func(stmts []namedconf.Located, view string, inView bool, frame *[]namedconf.Stmt) error
	walk = func(stmts []namedconf.Located, view string, inView bool, frame *[]namedconf.Stmt) error {
		for _, l := range stmts {
			st := l.Plain()
			switch {
			case st.Block && st.Name() == "zone" && len(st.Words) >= 2:
				k := ZoneKey{Zone: strings.TrimSuffix(st.Words[1].Text, "."), View: view}
				if k.Zone == "" {
					k.Zone = "."
				}
				body, err := namedconf.Format(st.Body...)
				if err != nil {
					return fmt.Errorf("%s: %w", l.Where(), err)
				}
				s.Stmts[k] = ZoneStmt{ZoneKey: k, Body: "{\n" + string(body) + "};", Where: l.Where(), stmt: st}
				continue
			case st.Block && st.Name() == "view" && !inView && len(st.Words) >= 2:
				views = append(views, st.Words[1].Text)
				fmt.Fprintf(h, "view %q\n", st.Words[1].Text)
				v := namedconf.Stmt{Words: st.Words, Block: true, Pos: st.Pos}
				if err := walk(l.Body, st.Words[1].Text, true, &v.Body); err != nil {
					return err
				}
				*frame = append(*frame, v)
				fmt.Fprintf(h, "end view\n")
				continue
			}
			for _, z := range specialZones(st) {
				special[ZoneKey{Zone: z, View: view}] = true
			}
			*frame = append(*frame, st)
			if st.Name() == "allow-new-zones" && len(st.Words) == 2 {
				newZones[view] = isYes(st.Words[1].Text)
			}
			if st.Name() == "new-zones-directory" && len(st.Words) == 2 {
				nzd[view] = st.Words[1].Text
			}
			if st.Block && st.Name() == "options" {
				for _, o := range st.Body {
					switch {
					case o.Name() == "allow-new-zones" && len(o.Words) == 2:
						newZones[""] = isYes(o.Words[1].Text)
					case o.Name() == "new-zones-directory" && len(o.Words) == 2:
						nzd[""] = o.Words[1].Text
					case o.Name() == "directory" && len(o.Words) == 2:
						directory = o.Words[1].Text
					}
					for _, z := range specialZones(o) {
						special[ZoneKey{Zone: z}] = true
					}
				}
			}
			b, err := namedconf.Format(st)
			if err != nil {
				return fmt.Errorf("%s: %w", l.Where(), err)
			}
			h.Write(b)
		}
		return nil
	}
	if err := walk(conf, "", false, &s.frame); err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, v := range append(views, "") {
		d, ok := nzd[v]
		if !ok {
			d = nzd[""]
		}
		if d == "" {
			d = directory
		}
		if d != "" && !filepath.IsAbs(d) {
			d = filepath.Join(directory, d)
		}
		if d != "" {
			dirs[d] = true
		}
	}
	s.nzdDirs = slices.Sorted(maps.Keys(dirs))
	// Each view inherits the options' setting unless it says otherwise.
	s.NewZones = newZones[""]
	if len(views) > 0 {
		s.NewZones = true
		for _, v := range views {
			on, set := newZones[v]
			if !set {
				on = newZones[""]
			}
			s.NewZones = s.NewZones && on
		}
	}
	for k := range special {
		if st, ok := s.Stmts[k]; ok {
			st.Special = true
			s.Stmts[k] = st
		}
	}
	return nil
}

func isYes(w string) bool {
	switch strings.ToLower(w) {
	case "yes", "true", "1":
		return true
	}
	return false
}

// specialZones are the zones a catalog-zones or response-policy statement
// names: `catalog-zones { zone "x" ...; }`, `response-policy { zone "x"; }`.
func specialZones(st namedconf.Stmt) []string {
	if st.Name() != "catalog-zones" && st.Name() != "response-policy" {
		return nil
	}
	var out []string
	add := func(ws []namedconf.Word) {
		if len(ws) >= 2 && ws[0].Text == "zone" {
			out = append(out, strings.TrimSuffix(ws[1].Text, "."))
		}
	}
	for _, w := range st.Words {
		for _, e := range w.Items {
			add(e.Words)
		}
	}
	for _, b := range st.Body {
		add(b.Words)
	}
	return out
}

// zoneHash is the hash of a zone file's text ($INCLUDEd parts inlined).
// A file in a directory laid as the kubelet lays a ConfigMap (`..data`)
// is read again only when that directory's content was switched since
// (dirVersion): a change to one zones ConfigMap re-reads that ConfigMap's
// files alone, not every zone's.
func (a *Agent) zoneHash(file string) (string, error) {
	dir := filepath.Dir(file)
	ver := dirVersion(dir)
	a.hashMu.Lock()
	c := a.hashCache[dir]
	if ver != "" && c != nil && c.version == ver {
		if sum, ok := c.sums[file]; ok {
			a.hashMu.Unlock()
			return sum, nil
		}
	}
	a.hashMu.Unlock()
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	cacheable := ver != "" && !bytes.Contains(b, []byte("$INCLUDE "))
	if !cacheable {
		if b, err = ReadZoneText(file); err != nil {
			return "", err
		}
	}
	sum := fmt.Sprintf("%x", sha256.Sum256(b))
	if cacheable {
		a.hashMu.Lock()
		if a.hashCache == nil {
			a.hashCache = map[string]*dirSums{}
		}
		if c = a.hashCache[dir]; c == nil || c.version != ver {
			c = &dirSums{version: ver, sums: map[string]string{}}
			a.hashCache[dir] = c
		}
		c.sums[file] = sum
		a.hashMu.Unlock()
	}
	return sum, nil
}

// dirSums are the zone file hashes of one directory at one version.
type dirSums struct {
	version string
	sums    map[string]string
}

// reloadArgs are rndc's arguments to reload one zone.
func reloadArgs(k ZoneKey) []string { return zoneArgs("reload", k) }

// dirVersion names what dir shows now when it is laid as the kubelet lays a
// ConfigMap volume: the directory its `..data` link resolves to, followed
// through a `..data` there too (the agent's laid directory points at the
// kubelet's mount, which has its own). Every switch of content is a new
// `..<timestamp>` directory, so the same version is the same files. "" for
// a directory not laid so.
func dirVersion(dir string) string {
	ver := ""
	for range 4 {
		t, err := filepath.EvalSymlinks(filepath.Join(dir, "..data"))
		if err != nil {
			break
		}
		ver, dir = t, t
	}
	return ver
}
