package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	if err := a.checkTLS(cfg); err != nil {
		return err
	}
	target := cfg.SecondaryConf
	if a.role == RolePrimary {
		target = cfg.PrimaryConf
	}
	return LinkAtomic(target, a.activeConf())
}

// writeImportedKey writes the key statement of a key Secret made outside
// the render (importExisting, or spec.secrets external) from its mount:
// `secret` (base64), optional `algorithm` and `keyName`, the format of the
// Secrets bind-fn renders. The statement goes through KeyStatement, which
// checks the name, the algorithm and the base64, so nothing in a Secret is
// pasted into named.conf. A keyName other than the one the config refers
// to is refused: named would load a key nothing uses, and every transfer
// or update signed with the configured name would fail.
func (a *Agent) writeImportedKey(k layout.ImportedKey) error {
	dir := filepath.Join(a.opt.KeysDir, k.Secret)
	text, err := importedKeyStatement(dir, k)
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

// importedKeyStatement reads a key Secret's mount in dir and returns the
// checked key statement of k.
func importedKeyStatement(dir string, k layout.ImportedKey) (string, error) {
	secret, err := os.ReadFile(filepath.Join(dir, "secret"))
	if err != nil {
		return "", fmt.Errorf("cannot read key %q: %w (the Secret needs a data key \"secret\": the key material in base64)", k.KeyName, err)
	}
	alg := k.Algorithm
	if b, err := os.ReadFile(filepath.Join(dir, "algorithm")); err == nil && len(trimSpace(b)) > 0 {
		alg = string(trimSpace(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "keyName")); err == nil && len(trimSpace(b)) > 0 {
		if got := string(trimSpace(b)); !sameKeyName(got, k.KeyName) {
			return "", fmt.Errorf("keyName %q is not the key %q the config uses: set keyName to %q, or remove it", got, k.KeyName, k.KeyName)
		}
	}
	return KeyStatement(Key{Name: k.KeyName, Algorithm: alg, Secret: string(trimSpace(secret))})
}

// sameKeyName compares key names as BIND does: domain names, case and the
// trailing dot aside.
func sameKeyName(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
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
