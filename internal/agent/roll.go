package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// KeyRoll is a key of a signed zone that the rendered Secret retires and a
// running named has not begun to roll (dnssec.NeedsRollover).
type KeyRoll struct {
	Zone string // bare name
	Tag  uint16
}

// PendingRollovers lists the keys the agent must start rolling on a
// running primary: keys of the Secret mount src whose .state retires them
// while named's own .state in keyDir does not. A key keyDir does not hold
// is not named's yet: it is installed from the Secret, and named started
// on those files rolls by itself.
func PendingRollovers(src, keyDir string) ([]KeyRoll, error) {
	files, err := readMount(src)
	if err != nil {
		return nil, err
	}
	keys, probs := dnssec.Parse(files)
	if len(probs) != 0 {
		return nil, fmt.Errorf("cannot read DNSSEC keys from %s: %v", src, probs[0])
	}
	var out []KeyRoll
	for _, k := range keys {
		secret := files[k.Stem+dnssec.SuffixState]
		base := filepath.Join(keyDir, k.Base())
		if secret == nil {
			continue
		}
		if _, err := os.Lstat(base + dnssec.SuffixKey); err != nil {
			continue
		}
		disk, err := os.ReadFile(base + dnssec.SuffixState)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if dnssec.NeedsRollover(secret, disk) {
			out = append(out, KeyRoll{Zone: strings.TrimSuffix(k.Zone(), "."), Tag: k.Tag()})
		}
	}
	slices.SortFunc(out, func(a, b KeyRoll) int {
		if c := strings.Compare(a.Zone, b.Zone); c != 0 {
			return c
		}
		return int(a.Tag) - int(b.Tag)
	})
	return out, nil
}

// RollArgs are rndc's arguments that start the roll of r in each view
// that serves r.Zone as a primary zone (the zone alone when none is
// listed).
func RollArgs(r KeyRoll, zones []layout.ZoneRef) [][]string {
	args := func(view string) []string {
		out := []string{"dnssec", "-rollover", "-key", strconv.Itoa(int(r.Tag)), r.Zone}
		if view != "" {
			out = append(out, "IN", view)
		}
		return out
	}
	var out [][]string
	for _, z := range zones {
		if z.Type == "" && strings.EqualFold(strings.TrimSuffix(z.Zone, "."), r.Zone) {
			out = append(out, args(z.View))
		}
	}
	if len(out) == 0 {
		out = append(out, args(""))
	}
	return out
}

// rollRetry spaces the attempts to start one rollover (named may not have
// loaded the zone yet).
const rollRetry = 10 * time.Second

// startRollovers runs on the primary: when the mounted files changed (or
// the agent started) it lists the rollovers to start, then runs `rndc
// dnssec -rollover -key <tag> <zone>` for each until named takes it.
// named then selects the successor the render shipped (installed beside
// the old key) from its key-directory, as TestBINDRollsKSK shows.
func (a *Agent) startRollovers(ctx context.Context) {
	if a.role != RolePrimary {
		return
	}
	if a.rollCheck {
		a.rollCheck = false
		pending, err := PendingRollovers(a.dnssecDir(), filepath.Join(a.opt.DataDir, layout.DNSSECKeySubdir))
		if err != nil {
			a.log.Warn("cannot list DNSSEC rollovers to start", "err", err)
			return
		}
		a.rollPending = pending
	}
	if len(a.rollPending) == 0 || time.Since(a.rollTried) < rollRetry {
		return
	}
	a.rollTried = time.Now()
	zones := a.config().PrimaryZones
	var left []KeyRoll
	for _, r := range a.rollPending {
		ok := true
		for _, args := range RollArgs(r, zones) {
			if out, err := a.rndc.Run(ctx, args...); err != nil {
				ok = false
				a.log.Warn("cannot start DNSSEC rollover yet; retrying", "zone", r.Zone, "key", r.Tag, "err", err)
			} else {
				a.log.Info("started DNSSEC rollover", "zone", r.Zone, "key", r.Tag, "rndc", strings.Join(args, " "), "named", out)
			}
		}
		if !ok {
			left = append(left, r)
		}
	}
	a.rollPending = left
}
