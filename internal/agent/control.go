package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// ControlSocketName is the control socket's file in the run directory.
const ControlSocketName = "agent.sock"

// DefaultControlSocket is where the pod's agent listens for control
// requests, and where `bind-fn-agent drain` asks by default.
func DefaultControlSocket() string { return filepath.Join(layout.RunDir, ControlSocketName) }

// maxSocketPath is the longest path a Linux unix socket can be bound to
// (sun_path is 108 bytes with its NUL).
const maxSocketPath = 107

// controlSocket is the socket path Run listens on ("" when disabled).
func (a *Agent) controlSocket() string {
	switch a.opt.ControlSocket {
	case "off":
		return ""
	case "":
		return filepath.Join(a.opt.RunDir, ControlSocketName)
	}
	return a.opt.ControlSocket
}

// listenControl binds the control socket, readable and writable by the
// agent's user only. A socket left by a previous run of the container (the
// run directory is an emptyDir, which outlives a container restart) is
// replaced; any other file there is an error.
func listenControl(path string) (net.Listener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("control socket %q is %d bytes long, more than a unix socket path may be (%d): set --control-socket to a shorter path", path, len(path), maxSocketPath)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("control socket %q: a %s is in the way; remove it", path, fi.Mode().Type())
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("cannot replace the old control socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on the control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("cannot restrict the control socket: %w", err)
	}
	return ln, nil
}

// serve starts the network listener (Handler) and the control socket
// (ControlHandler); the returned function stops both.
func (a *Agent) serve() (stop func(), err error) {
	var srvs []*http.Server
	stop = func() {
		for _, s := range srvs {
			_ = s.Close()
		}
	}
	start := func(ln net.Listener, h http.Handler) {
		s := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		srvs = append(srvs, s)
		go func() { _ = s.Serve(ln) }()
	}
	if path := a.controlSocket(); path != "" {
		ln, err := listenControl(path)
		if err != nil {
			return stop, fmt.Errorf("--control-socket: %w", err)
		}
		start(ln, a.state.ControlHandler())
		a.log.Info("serving POST /drain on the control socket", "path", path)
	}
	httpAddr := ""
	if a.opt.Listen != "off" {
		ln, err := net.Listen("tcp", a.opt.Listen)
		if err != nil {
			stop()
			return stop, fmt.Errorf("--listen: %w", err)
		}
		start(ln, a.state.Handler())
		httpAddr = ln.Addr().String()
		a.log.Info("serving GET /metrics /status /readyz /healthz", "addr", httpAddr)
	}
	if a.opt.Started != nil {
		a.opt.Started(httpAddr)
	}
	return stop, nil
}

// Drain asks the agent behind the control socket to drain (POST /drain) and
// waits until it has: the pod's preStop hook. out gets the agent's answer.
func Drain(ctx context.Context, socket string, out io.Writer) error {
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://bind-fn-agent/drain", nil)
	if err != nil {
		return err
	}
	rsp, err := c.Do(req)
	if err != nil {
		var ne *net.OpError
		if errors.As(err, &ne) && ne.Op == "dial" {
			return fmt.Errorf("cannot reach the agent on %s (is it running?): %w", socket, err)
		}
		return fmt.Errorf("drain: %w", err)
	}
	defer rsp.Body.Close()
	b, err := io.ReadAll(rsp.Body)
	if err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	if rsp.StatusCode != http.StatusOK {
		return fmt.Errorf("drain: the agent answered %s: %s", rsp.Status, strings.TrimSpace(string(b)))
	}
	_, _ = out.Write(b)
	return nil
}
