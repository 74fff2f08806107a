package namedconf

import "fmt"

// TLSEphemeral is BIND's built-in TLS configuration: on a listener a
// self-signed certificate made at start, on a client (primaries,
// also-notify) TLS without verifying the server (BIND's "opportunistic
// TLS"). No tls block may take the name.
const TLSEphemeral = "ephemeral"

// TLSBlock is a `tls "<name>" { ... };` statement: a server's certificate
// and key, or, for a client, the CA and the name the server's certificate
// must hold (BIND's "strict TLS": ca-file and remote-hostname).
type TLSBlock struct {
	Name           string
	CertFile       string
	KeyFile        string
	CAFile         string
	RemoteHostname string
	// Protocols are the TLS versions ("TLSv1.2", "TLSv1.3"); none: BIND's.
	Protocols []string
}

// Stmt renders the block. A nameless block, or one named "ephemeral" or
// "none" (BIND's reserved names), fails at File.Bytes.
func (t TLSBlock) Stmt() Stmt {
	switch t.Name {
	case "", TLSEphemeral, "none":
		return S(invalidWord(fmt.Sprintf("tls block name %q is empty or reserved by BIND", t.Name)))
	}
	var body []Stmt
	for _, f := range []struct{ kw, v string }{
		{"cert-file", t.CertFile}, {"key-file", t.KeyFile},
		{"ca-file", t.CAFile}, {"remote-hostname", t.RemoteHostname},
	} {
		if f.v != "" {
			body = append(body, S(Kw(f.kw), Str(f.v)))
		}
	}
	if len(t.Protocols) > 0 {
		var ps []Stmt
		for _, p := range t.Protocols {
			ps = append(ps, S(Kw(p)))
		}
		body = append(body, S(Kw("protocols"), L(ps...)))
	}
	return B([]Word{Kw("tls"), Str(t.Name)}, body...)
}

// HTTPBlock is an `http "<name>" { endpoints { "/dns-query"; }; };`
// statement, the DoH endpoints a listener serves.
type HTTPBlock struct {
	Name      string
	Endpoints []string
}

// Stmt renders the block.
func (h HTTPBlock) Stmt() Stmt {
	if h.Name == "" || h.Name == "default" {
		return S(invalidWord(fmt.Sprintf("http block name %q is empty or reserved by BIND", h.Name)))
	}
	var eps []Stmt
	for _, e := range h.Endpoints {
		eps = append(eps, S(Str(e)))
	}
	return B([]Word{Kw("http"), Str(h.Name)}, S(Kw("endpoints"), L(eps...)))
}

// Listener is a `listen-on[-v6] [port N] [tls "<name>"] [http "<name>"]
// { match; };` statement: plain DNS without TLS, DoT with TLS, DoH with
// TLS and HTTP.
type Listener struct {
	V6   bool
	Port int // 0: BIND's default for the transport
	TLS  string
	HTTP string
	// Match is the address match list ("any").
	Match []Stmt
}

// Stmt renders the statement. HTTP without TLS (unencrypted DoH, which
// BIND spells tls none) is refused here: bind-fn never serves it.
func (l Listener) Stmt() Stmt {
	kw := "listen-on"
	if l.V6 {
		kw = "listen-on-v6"
	}
	w := []Word{Kw(kw)}
	if l.Port != 0 {
		if l.Port < 1 || l.Port > 65535 {
			return S(invalidWord(fmt.Sprintf("port %d is not from 1 to 65535", l.Port)))
		}
		w = append(w, Kw("port"), Int(int64(l.Port)))
	}
	if l.HTTP != "" && l.TLS == "" {
		return S(invalidWord("http listener without tls: unencrypted DoH is not rendered"))
	}
	if l.TLS != "" {
		w = append(w, Kw("tls"), Str(l.TLS))
	}
	if l.HTTP != "" {
		w = append(w, Kw("http"), Str(l.HTTP))
	}
	return S(append(w, L(l.Match...))...)
}
