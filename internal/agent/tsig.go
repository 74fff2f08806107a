package agent

import (
	"crypto/hmac"
	"crypto/md5" //nolint:gosec // hmac-md5 is a TSIG algorithm BIND still accepts (RFC 8945 §6)
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/vocab"
	"github.com/miekg/dns"
)

// tsigHashes are the hash functions of vocab.TSIG, the TSIG algorithms BIND
// accepts (TestTSIGHashes: one for each). miekg/dns dropped hmac-md5; the
// agent signs with it itself, so a key BIND takes is a key the agent can use.
var tsigHashes = map[string]func() hash.Hash{
	"hmac-md5":    md5.New,
	"hmac-sha1":   sha1.New,
	"hmac-sha224": sha256.New224,
	"hmac-sha256": sha256.New,
	"hmac-sha384": sha512.New384,
	"hmac-sha512": sha512.New,
}

// tsigProvider signs and verifies with one key, by every algorithm BIND
// knows (dns.TsigProvider).
type tsigProvider struct {
	name   string // canonical: lower case, absolute
	hash   func() hash.Hash
	wire   string
	secret []byte
}

// newTSIG returns the provider of k.
func newTSIG(k Key) (*tsigProvider, error) {
	alg := strings.ToLower(k.Algorithm)
	if alg == "" {
		alg = DefaultAlgorithm
	}
	a, ok := vocab.TSIGByName(alg)
	h := tsigHashes[a.Name]
	if !ok || h == nil {
		return nil, fmt.Errorf("key %q: unsupported algorithm %q", k.Name, k.Algorithm)
	}
	raw, err := base64.StdEncoding.DecodeString(k.Secret)
	if err != nil {
		return nil, fmt.Errorf("key %q: secret is not valid base64", k.Name)
	}
	return &tsigProvider{name: dns.CanonicalName(k.Name), hash: h, wire: a.Wire, secret: raw}, nil
}

// sign adds the TSIG record to m (replacing one an earlier attempt added);
// send m through a client or conn whose TsigProvider is p.
func (p *tsigProvider) sign(m *dns.Msg) {
	if m.IsTsig() != nil {
		m.Extra = m.Extra[:len(m.Extra)-1]
	}
	m.SetTsig(p.name, p.wire, 300, time.Now().Unix())
}

func (p *tsigProvider) check(t *dns.TSIG) error {
	if dns.CanonicalName(t.Hdr.Name) != p.name {
		return dns.ErrSecret
	}
	if dns.CanonicalName(t.Algorithm) != dns.CanonicalName(p.wire) {
		return dns.ErrKeyAlg
	}
	return nil
}

// Generate implements dns.TsigProvider.
func (p *tsigProvider) Generate(msg []byte, t *dns.TSIG) ([]byte, error) {
	if err := p.check(t); err != nil {
		return nil, err
	}
	h := hmac.New(p.hash, p.secret)
	h.Write(msg)
	return h.Sum(nil), nil
}

// Verify implements dns.TsigProvider.
func (p *tsigProvider) Verify(msg []byte, t *dns.TSIG) error {
	b, err := p.Generate(msg, t)
	if err != nil {
		return err
	}
	mac, err := hex.DecodeString(t.MAC)
	if err != nil {
		return err
	}
	if !hmac.Equal(b, mac) {
		return dns.ErrSig
	}
	return nil
}

// TSIGProvider is the dns.TsigProvider of k, for every algorithm BIND
// knows (hmac-md5 too, which miekg/dns dropped), and the algorithm's name
// on the wire to sign with (dns.Msg.SetTsig).
func TSIGProvider(k Key) (dns.TsigProvider, string, error) {
	p, err := newTSIG(k)
	if err != nil {
		return nil, "", err
	}
	return p, p.wire, nil
}
