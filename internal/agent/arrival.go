package agent

// The ConfigMaps and Secrets of one change reach the pod one at a time
// (each its own watch event, or its own kubelet sync), in any order: the
// config that names a new zone file may come before the zones ConfigMap that
// holds it, a signed zone before its keys' Secret. A change that needs a
// file that has not arrived yet is waited for, reported as waiting (the
// log at INFO, /status `waiting`, bindfn_agent_waiting_for_input 1), never
// as a failed apply, and applied when the file comes (its arrival changes
// the hash of the inputs, so the next poll applies it). A file still
// missing after WaitBound is a real failure, reported as one.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// DefaultWaitBound is how long a change waits for a missing input before
// it fails: past the kubelet's sync of every volume of the pod (one minute
// by default, plus jitter) when the agent follows its mounts.
const DefaultWaitBound = 2 * time.Minute

// MissingInput is a file a change needs that is not in its mount (yet).
type MissingInput struct {
	Path string // the file as the change names it
	// From is the object that brings it: `ConfigMap "<name>"`, `Secret
	// "<name>"`, or the mount's directory when no object is known.
	From string
	Err  error
}

func (e *MissingInput) Error() string {
	return fmt.Sprintf("waiting for %s from %s: %v", e.Path, e.From, e.Err)
}

func (e *MissingInput) Unwrap() error { return e.Err }

// errNoDNSSECKey: a signed zone whose keys are not in the DNSSEC Secret's
// mount (yet).
var errNoDNSSECKey = errors.New("no DNSSEC key")

// notFoundLine is named-checkconf's report of a file it cannot open: a zone
// file, a $INCLUDE part or an include.
var notFoundLine = regexp.MustCompile(`(?m)(?:loading from master file |open: |: )(/[^\s:]+)(?:[: ]+(?:failed: )?file not found)`)

// includeStmt is an include statement's file.
var includeStmt = regexp.MustCompile(`^\s*include\s+"([^"]+)"`)

// missingInclude is the file of an include named-checkconf cannot open: it
// reports the include's own file:line ("parsing failed: file not found"),
// whose line names it.
func missingInclude(ce *CheckError) string {
	if ce.File == "" || ce.Line < 1 || !strings.Contains(ce.Message, "file not found") {
		return ""
	}
	b, err := os.ReadFile(ce.File)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	if ce.Line > len(lines) {
		return ""
	}
	if m := includeStmt.FindStringSubmatch(lines[ce.Line-1]); m != nil {
		return m[1]
	}
	return ""
}

// missingInput finds, in err, a file a change needs that is not in one of
// the agent's input mounts: a missing file under the config, zones, keys or
// DNSSEC directories (an fs error in the chain, or named-checkconf's "file
// not found"), or a signed zone without its keys. nil when err is anything
// else.
func (a *Agent) missingInput(err error) *MissingInput {
	var mi *MissingInput
	if errors.As(err, &mi) {
		return mi
	}
	if errors.Is(err, errNoDNSSECKey) {
		cluster := ""
		if c := a.config(); c != nil {
			cluster = c.Cluster
		}
		return &MissingInput{Path: a.dnssecDir(), From: fmt.Sprintf("Secret %q", layout.DNSSECSecretName(cluster)), Err: err}
	}
	var path string
	var pe *fs.PathError
	var ce *CheckError
	switch {
	case errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrNotExist):
		path = pe.Path
	case errors.As(err, &ce):
		if m := notFoundLine.FindStringSubmatch(ce.Output + "\n" + ce.Message); m != nil {
			path = m[1]
		} else if path = missingInclude(ce); path == "" {
			return nil
		}
	default:
		return nil
	}
	from, ok := a.inputOf(path)
	if !ok {
		return nil
	}
	return &MissingInput{Path: path, From: from, Err: err}
}

// inputOf names the object whose mount holds path: a followed ConfigMap
// (--configmap), a zones shard, the config ConfigMap, a key or the DNSSEC
// Secret. false when path is in none of the agent's input mounts.
func (a *Agent) inputOf(path string) (string, bool) {
	path = filepath.Clean(path)
	under := func(dir string) bool {
		dir = filepath.Clean(dir)
		return dir != "." && strings.HasPrefix(path, dir+string(filepath.Separator))
	}
	for _, m := range a.opt.Mirrors {
		if under(m.Live) || under(m.Mount) {
			return fmt.Sprintf("ConfigMap %q", m.Name), true
		}
	}
	cluster := ""
	if c := a.config(); c != nil {
		cluster = c.Cluster
	}
	switch {
	case under(a.opt.ZonesDir):
		rel, _ := filepath.Rel(a.opt.ZonesDir, path)
		shard := strings.SplitN(rel, string(filepath.Separator), 2)[0]
		var n int
		if _, err := fmt.Sscanf(shard, "%d", &n); err == nil && fmt.Sprint(n) == shard {
			return fmt.Sprintf("ConfigMap %q", layout.ZonesConfigMapName(cluster, n)), true
		}
		return "the zones mount " + filepath.Join(a.opt.ZonesDir, shard), true
	case under(filepath.Dir(a.opt.ConfigFile)):
		return fmt.Sprintf("ConfigMap %q", layout.ConfigMapName(cluster)), true
	case under(a.dnssecDir()):
		return fmt.Sprintf("Secret %q", layout.DNSSECSecretName(cluster)), true
	case under(a.opt.KeysDir):
		rel, _ := filepath.Rel(a.opt.KeysDir, path)
		return fmt.Sprintf("Secret %q", strings.SplitN(rel, string(filepath.Separator), 2)[0]), true
	}
	return "", false
}

// waitState is the input the last change waits for.
type waitState struct {
	what    string // MissingInput.Path + From: a new input restarts the clock
	since   time.Time
	expired bool // the bound passed and the failure was reported
}

// waitFor reports err as a wait when it is a missing input and the change
// has waited less than the bound: it logs and shows the wait, and returns
// nil (the caller reports nothing more). Otherwise it ends any wait and
// returns the failure to report: err, or, past the bound, err saying so.
func (a *Agent) waitFor(stage string, err error) error {
	mi := a.missingInput(err)
	if mi == nil || !a.running {
		a.clearWait()
		return err
	}
	what := mi.Path + " from " + mi.From
	now := time.Now()
	if a.waiting == nil || a.waiting.what != what {
		a.waiting = &waitState{what: what, since: now}
		a.log.Info("change waits for a file that has not arrived yet; named keeps serving its current config",
			"waiting", "waiting for "+what, "stage", stage, "bound", a.waitBound(), "err", err)
	}
	if d := now.Sub(a.waiting.since); d >= a.waitBound() {
		a.waiting.expired = true
		a.state.metrics.Waiting.Set(0)
		a.state.Update(func(s *Status) { s.Waiting = "" })
		return fmt.Errorf("%s did not arrive within %s: %w", what, a.waitBound(), err)
	}
	msg := "waiting for " + what
	a.state.metrics.Waiting.Set(1)
	a.state.Update(func(s *Status) { s.Waiting = msg })
	return nil
}

// endWait ends the wait of a change that applied.
func (a *Agent) endWait() {
	if a.waiting != nil && !a.waiting.expired {
		a.log.Info("the file waited for arrived; the change is applied", "waited", "waiting for "+a.waiting.what, "for", time.Since(a.waiting.since).Round(time.Millisecond))
	}
	a.clearWait()
}

// clearWait forgets the wait (a change applied, or failed for another reason).
func (a *Agent) clearWait() {
	if a.waiting == nil {
		return
	}
	a.waiting = nil
	a.state.metrics.Waiting.Set(0)
	a.state.Update(func(s *Status) { s.Waiting = "" })
}

// waitDue: a change has waited out the bound without a new input, so it
// is tried once more and, still missing its file, fails.
func (a *Agent) waitDue() bool {
	return a.waiting != nil && !a.waiting.expired && time.Since(a.waiting.since) >= a.waitBound()
}

func (a *Agent) waitBound() time.Duration {
	if a.opt.WaitBound > 0 {
		return a.opt.WaitBound
	}
	return DefaultWaitBound
}
