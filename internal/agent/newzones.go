package agent

// Zone by zone: a change of zone statements alone is applied with `rndc
// addzone`, `modzone` and `delzone` (apply.go) instead of a reconfig that
// re-reads every zone statement. Two things make that safe:
//
//   - checkZones runs named-checkconf -z on the changed zones only: the
//     config's other statements (keys, ACLs, options, server lists) with
//     just those zone statements, so their statements are checked against
//     the same definitions and their files loaded as named would.
//   - named keeps the zones it added in its NZD database (new-zones-directory,
//     else its directory). Each of them is also in the rendered config
//     from then on, and named refuses to start or reconfigure with a zone
//     in both ("zone 'x' already exists"). clearNewZones empties the NZD
//     before every start and every reconfig: named.conf is then the whole
//     truth again, and the NZD only ever holds the zones added since.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// zoneCheckFile is the config checkZones writes into RunDir.
const zoneCheckFile = "zonecheck.conf"

// checkZones runs named-checkconf -z on snap's config reduced to the zones
// plan adds, modifies or reloads (and the catalog and policy zones, which
// the views' statements name). A rejection is a *CheckError located in
// the rendered file that holds the zone's statement.
func (a *Agent) checkZones(ctx context.Context, plan Plan, snap Snapshot) error {
	keep := map[ZoneKey]bool{}
	for _, z := range plan.Add {
		keep[z.ZoneKey] = true
	}
	for _, z := range plan.Modify {
		keep[z.ZoneKey] = true
	}
	for _, k := range plan.Reload {
		keep[k] = true
	}
	if len(keep) == 0 {
		return nil // deletions only: nothing to load
	}
	conf, err := zoneCheckConf(snap, keep)
	if err != nil {
		return err
	}
	path := filepath.Join(a.opt.RunDir, zoneCheckFile)
	// The frame holds the key statements: readable by the agent alone.
	if _, err := WriteFileAtomic(path, conf, 0o600); err != nil {
		return err
	}
	err = RunNamedCheckconf(ctx, a.opt.NamedCheckconf, path)
	var ce *CheckError
	if errors.As(err, &ce) && ce.File == path {
		ce.File, ce.Line = locateZoneLine(conf, ce.Line, snap)
	}
	return err
}

// zoneCheckConf is snap's frame with the zone statements of keep, and the
// special zones, each in its view.
func zoneCheckConf(snap Snapshot, keep map[ZoneKey]bool) ([]byte, error) {
	frame := make([]namedconf.Stmt, len(snap.frame))
	copy(frame, snap.frame)
	views := map[string]int{}
	for i, st := range frame {
		if st.Block && st.Name() == "view" && len(st.Words) >= 2 {
			views[st.Words[1].Text] = i
			frame[i].Body = append([]namedconf.Stmt(nil), st.Body...)
		}
	}
	var keys []ZoneKey
	for k, z := range snap.Stmts {
		if keep[k] || z.Special {
			keys = append(keys, k)
		}
	}
	sortKeys(keys)
	for _, k := range keys {
		st := snap.Stmts[k].stmt
		if k.View == "" {
			frame = append(frame, st)
			continue
		}
		i, ok := views[k.View]
		if !ok {
			return nil, fmt.Errorf("zone %s: view %q is not in the config", k, k.View)
		}
		frame[i].Body = append(frame[i].Body, st)
	}
	b, err := namedconf.Format(frame...)
	if err != nil {
		return nil, fmt.Errorf("cannot write the zones' check config: %w", err)
	}
	return b, nil
}

// locateZoneLine maps a line of the check config to the rendered file and
// line of the zone statement it is in (the check config's own file and
// line when it is in no zone statement).
func locateZoneLine(conf []byte, line int, snap Snapshot) (string, int) {
	lines := strings.Split(string(conf), "\n")
	for i := min(line, len(lines)) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, `zone "`) {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(l, `zone "`), `"`)
		name = strings.TrimSuffix(name, ".")
		for k, z := range snap.Stmts {
			if k.Zone == name && z.Where != "" {
				file, ln, _ := strings.Cut(z.Where, ":")
				n := 0
				fmt.Sscan(ln, &n)
				return file, n + (line - 1 - i)
			}
		}
		break
	}
	return zoneCheckFile, line
}

// clearNewZones removes named's record of the zones it added by rndc (the
// NZD database, or the NZF file of a build without LMDB) from snap's
// directories, before named reads its config: every such zone is in the
// config by then.
func clearNewZones(snap Snapshot) error {
	for _, dir := range snap.nzdDirs {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cannot clear named's added zones: %w", err)
		}
		for _, e := range ents {
			n := e.Name()
			if e.Type().IsRegular() && (strings.HasSuffix(n, ".nzd") || strings.HasSuffix(n, ".nzd-lock") || strings.HasSuffix(n, ".nzf") || strings.HasSuffix(n, ".nzf~")) {
				if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("cannot clear named's added zones: %w", err)
				}
			}
		}
	}
	return nil
}

// clearNewZones is clearNewZones for the config named runs with.
func (a *Agent) clearNewZones() error { return clearNewZones(a.appliedSnap) }
