package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// dnssecDir is the mount of the DNSSEC key Secret: layout.DNSSECDir, beside
// the keys mount (so tests that move KeysDir move it too).
func (a *Agent) dnssecDir() string {
	return filepath.Join(filepath.Dir(a.opt.KeysDir), filepath.Base(layout.DNSSECDir))
}

// installDNSSECKeys puts the signing keys of the mounted DNSSEC Secret into
// named's key-directory on the primary, before named loads (or reloads) the
// zones, so that dnssec-policy adopts them instead of making keys of its
// own. A key already in the key-directory is left alone: named owns its
// files from then on (it rewrites .key and .state as the key ages). A
// signed zone without keys in the mount is an error: the change waits for
// the Secret (kubelet may update it after the config).
func (a *Agent) installDNSSECKeys(cfg *layout.AgentConfigDoc) error {
	if a.role != RolePrimary {
		return nil
	}
	installed, err := InstallDNSSECKeys(a.dnssecDir(), filepath.Join(a.opt.DataDir, layout.DNSSECKeySubdir), cfg.DNSSECZones, a.chown)
	for _, k := range installed {
		a.log.Info("installed DNSSEC key", "key", k)
	}
	return err
}

// InstallDNSSECKeys copies every key found in src (a Secret mount:
// K<zone>_<alg>_<tag>.{key,private,state}, or any names) into keyDir under
// BIND's names (K<zone>+<alg>+<tag>.*), skipping keys keyDir already has.
// zones are the signed zones (canonical or bare names) that must have a key.
// It returns the keys it installed.
func InstallDNSSECKeys(src, keyDir string, zones []string, chown func(string) error) ([]string, error) {
	files, err := readMount(src)
	if err != nil {
		return nil, err
	}
	keys, probs := dnssec.Parse(files)
	if len(probs) != 0 {
		return nil, fmt.Errorf("cannot install DNSSEC keys from %s: %v", src, probs[0])
	}
	dnssec.InferRoles(keys) // imported keys may come without .state files
	have := map[string]bool{}
	for _, k := range keys {
		have[k.Zone()] = true
	}
	for _, z := range zones {
		if !have[strings.ToLower(strings.TrimSuffix(z, "."))+"."] {
			return nil, fmt.Errorf("%w for signed zone %q in %s: the Secret %s is not mounted or not updated yet; waiting, so that named does not make keys of its own", errNoDNSSECKey, z, src, "<cluster>-dnssec")
		}
	}
	var installed []string
	for _, k := range keys {
		base := filepath.Join(keyDir, k.Base())
		if _, err := os.Lstat(base + dnssec.SuffixKey); err == nil {
			continue
		}
		state := files[k.Stem+dnssec.SuffixState]
		if state == nil {
			state = k.StateFile()
		}
		// .key last: named finds a key by its .key file.
		for _, f := range []struct {
			suffix string
			data   []byte
			perm   os.FileMode
		}{
			{dnssec.SuffixPrivate, files[k.Stem+dnssec.SuffixPrivate], 0o600},
			{dnssec.SuffixState, state, 0o644},
			{dnssec.SuffixKey, files[k.Stem+dnssec.SuffixKey], 0o644},
		} {
			if _, err := WriteFileAtomic(base+f.suffix, f.data, f.perm); err != nil {
				return installed, err
			}
			if chown != nil {
				if err := chown(base + f.suffix); err != nil {
					return installed, err
				}
			}
		}
		installed = append(installed, k.Base())
	}
	return installed, nil
}

// readMount reads the files of a Secret volume (kubelet's ..data layout:
// the visible names are links into a timestamped directory). A missing
// directory has no files.
func readMount(dir string) (map[string][]byte, error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read DNSSEC keys: %w", err)
	}
	files := map[string][]byte{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			if fi, serr := os.Stat(filepath.Join(dir, e.Name())); serr == nil && fi.IsDir() {
				continue
			}
			return nil, fmt.Errorf("cannot read DNSSEC key file: %w", err)
		}
		files[e.Name()] = b
	}
	return files, nil
}

// seedZone copies a seed into the data directory: once (SeedFile), or, for
// an inline-signed zone (Refresh), whenever the rendered file differs. named
// never writes an inline-signed zone's raw file (the signed copy is its own
// .signed file and journal), so a new render must replace it, and `rndc
// reload` re-signs it.
func seedZone(s layout.SeedZone, chown func(string) error) (bool, error) {
	if !s.Refresh {
		return SeedFile(s.Source, s.Dest, chown)
	}
	data, err := ReadZoneText(s.Source)
	if err != nil {
		return false, fmt.Errorf("cannot seed %s: %w", s.Dest, err)
	}
	wrote, err := WriteFileAtomic(s.Dest, data, 0o644)
	if err != nil || !wrote || chown == nil {
		return wrote, err
	}
	return true, chown(s.Dest)
}

// refreshSeeds re-copies the inline-signed zones' raw files after a change
// of the zones alone (prepare does it with a config change).
func (a *Agent) refreshSeeds(cfg *layout.AgentConfigDoc) error {
	if cfg == nil {
		return nil
	}
	for i, s := range cfg.SeedZones {
		if !s.Refresh {
			continue
		}
		copied, err := seedZone(s, a.chown)
		if err != nil {
			return fmt.Errorf("seedZones[%d]: %w", i, err)
		}
		if copied {
			a.log.Info("refreshed signed zone's file", "zone", s.Zone, "view", s.View, "dest", s.Dest)
		}
	}
	return nil
}
