package agent

import (
	"fmt"
	"os"
	"path/filepath"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// prepare writes every file named needs from cfg: the rndc key, imported
// key includes, seeded zones and the active config link.
// At start the rndc client key is (re)written from named's key; later it
// follows only after named has accepted a change (see apply).
func (a *Agent) prepare(cfg *layout.AgentConfigDoc, start bool) error {
	for _, d := range []string{a.opt.RunDir, a.opt.DataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cannot create %s: %w", d, err)
		}
		if a.chown != nil {
			if err := a.chown(d); err != nil {
				return err
			}
		}
	}
	for i, d := range cfg.DataDirs {
		dir := filepath.Join(a.opt.DataDir, filepath.Clean("/"+d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("dataDirs[%d]: cannot create %s: %w", i, dir, err)
		}
		if a.chown != nil {
			if err := a.chown(dir); err != nil {
				return err
			}
		}
	}
	namedKey := filepath.Join(a.opt.RunDir, layout.RNDCKeyFile)
	if _, err := EnsureRNDCKey(filepath.Join(a.opt.RNDCDir, layout.RNDCKeyFile), namedKey, layout.RNDCKeyName); err != nil {
		return err
	}
	if _, err := os.Stat(a.rndc.Conf); err != nil || start {
		if err := WriteRNDCClientConf(a.rndc.Conf, namedKey, a.opt.RNDCServer, a.opt.RNDCPort); err != nil {
			return err
		}
	}
	for i, k := range cfg.ImportedKeys {
		if err := a.writeImportedKey(k); err != nil {
			return fmt.Errorf("importedKeys[%d]: %w", i, err)
		}
	}
	for i, s := range cfg.SeedZones {
		copied, err := seedZone(s, a.chown)
		if err != nil {
			return fmt.Errorf("seedZones[%d]: %w", i, err)
		}
		if copied {
			a.log.Info("seeded zone file", "zone", s.Zone, "view", s.View, "dest", s.Dest)
		}
	}
	if err := a.installDNSSECKeys(cfg); err != nil {
		return err
	}
	target := cfg.SecondaryConf
	if a.role == RolePrimary {
		target = cfg.PrimaryConf
	}
	return LinkAtomic(target, a.activeConf())
}

func (a *Agent) writeImportedKey(k layout.ImportedKey) error {
	dir := filepath.Join(a.opt.KeysDir, k.Secret)
	secret, err := os.ReadFile(filepath.Join(dir, "secret"))
	if err != nil {
		return fmt.Errorf("cannot read key %q from Secret %q: %w", k.KeyName, k.Secret, err)
	}
	alg := k.Algorithm
	if b, err := os.ReadFile(filepath.Join(dir, "algorithm")); err == nil && len(trimSpace(b)) > 0 {
		alg = string(trimSpace(b))
	}
	text, err := KeyStatement(Key{Name: k.KeyName, Algorithm: alg, Secret: string(trimSpace(secret))})
	if err != nil {
		//lint:ignore ST1005 the message starts with the Kubernetes kind "Secret"
		return fmt.Errorf("Secret %q: %w", k.Secret, err)
	}
	include := k.Include
	if include == "" {
		include = filepath.Join(a.opt.RunDir, "keys", k.Secret+".conf")
	}
	if _, err := WriteFileAtomic(include, []byte(text), 0o640); err != nil {
		return err
	}
	if a.chown != nil {
		return a.chown(include)
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
