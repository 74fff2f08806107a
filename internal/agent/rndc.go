package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// RNDC drives named's control channel with the rndc binary.
//
// The key: the agent writes RunDir/rndc.key at start — a copy of the mounted
// rndc Secret (RNDCDir/rndc.key) when there is one, otherwise a key it
// generates from crypto/rand, so the key never needs to leave the pod.
// named.conf includes one of the two: the rendered one the Secret
// (layout.RNDCKeyInclude), one written for a pod without the Secret the
// agent's copy (agent/README.md). rndc itself reads a separate client copy
// (RunDir/rndc-client.key through RunDir/rndc.conf), refreshed only after
// named has taken the new key in, so rotating the Secret never locks the
// agent out.
type RNDC struct {
	Bin     string
	Conf    string // rndc.conf written by WriteRNDCClientConf
	Timeout time.Duration
}

// Run runs one rndc command and returns its output.
func (r RNDC) Run(ctx context.Context, args ...string) (string, error) {
	t := r.Timeout
	if t == 0 {
		t = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Bin, append([]string{"-c", r.Conf}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	if err != nil {
		return text, fmt.Errorf("rndc %s: %v: %s", strings.Join(args, " "), err, text)
	}
	return text, nil
}

// GenerateRNDCKey returns a new rndc key file's text (hmac-sha256, 256 bits).
func GenerateRNDCKey(name string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("cannot generate rndc key: %w", err)
	}
	return KeyStatement(Key{Name: name, Algorithm: "hmac-sha256", Secret: base64.StdEncoding.EncodeToString(b)})
}

// EnsureRNDCKey writes dest (named's include): the content of mounted when
// that file exists and holds a key, else a generated key (kept if dest
// already holds a valid one). It returns the key's name.
func EnsureRNDCKey(mounted, dest, defaultName string) (string, error) {
	if b, err := os.ReadFile(mounted); err == nil {
		keys, err := ParseKeys(string(b))
		if err != nil || len(keys) == 0 {
			return "", fmt.Errorf("cannot use rndc key %s: no valid key statement (%v)", mounted, err)
		}
		if _, err := WriteFileAtomic(dest, b, 0o640); err != nil {
			return "", err
		}
		return keys[0].Name, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("cannot read rndc key: %w", err)
	}
	if b, err := os.ReadFile(dest); err == nil {
		if keys, err := ParseKeys(string(b)); err == nil && len(keys) > 0 {
			return keys[0].Name, nil
		}
	}
	text, err := GenerateRNDCKey(defaultName)
	if err != nil {
		return "", err
	}
	if _, err := WriteFileAtomic(dest, []byte(text), 0o640); err != nil {
		return "", err
	}
	return defaultName, nil
}

// WriteRNDCClientConf copies the named-side key file to the client key and
// writes rndc.conf pointing at server:port with it.
func WriteRNDCClientConf(conf, namedKey, server string, port int) error {
	b, err := os.ReadFile(namedKey)
	if err != nil {
		return fmt.Errorf("cannot read rndc key: %w", err)
	}
	keys, err := ParseKeys(string(b))
	if err != nil || len(keys) == 0 {
		return fmt.Errorf("cannot use rndc key %s: no valid key statement (%v)", namedKey, err)
	}
	clientKey := filepath.Join(filepath.Dir(conf), "rndc-client.key")
	if _, err := WriteFileAtomic(clientKey, b, 0o600); err != nil {
		return err
	}
	var f namedconf.File
	f.Comment("Written by bind-fn-agent.")
	f.Add(namedconf.S(namedconf.Kw("include"), namedconf.Str(clientKey)))
	f.Add(namedconf.B([]namedconf.Word{namedconf.Kw("options")},
		namedconf.S(namedconf.Kw("default-server"), namedconf.Kw(server)),
		namedconf.S(namedconf.Kw("default-port"), namedconf.Int(int64(port))),
		namedconf.S(namedconf.Kw("default-key"), namedconf.Str(keys[0].Name))))
	text, err := f.Bytes()
	if err != nil {
		return fmt.Errorf("cannot render rndc.conf: %w", err)
	}
	_, err = WriteFileAtomic(conf, text, 0o600)
	return err
}
