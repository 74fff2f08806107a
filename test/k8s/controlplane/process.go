package controlplane

import (
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a child process whose output goes to <dir>/<name>.log.
type Process struct {
	Name, Log string
	cmd       *exec.Cmd
	done      chan struct{}
	once      sync.Once
}

// StartProcess starts bin with args, its output in dir/name.log. The child
// is killed if the test process dies (Pdeathsig).
func StartProcess(dir, name, bin string, args ...string) (*Process, error) {
	return StartProcessEnv(dir, name, nil, bin, args...)
}

// StartProcessEnv is StartProcess with extra environment variables.
func StartProcessEnv(dir, name string, env []string, bin string, args ...string) (*Process, error) {
	log := filepath.Join(dir, name+".log")
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &Process{Name: name, Log: log, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid of the process.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after 10 s.
func (p *Process) Stop() {
	p.once.Do(func() {
		if p.Exited() {
			return
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
}

// Tail is the last n lines of the process's log.
func (p *Process) Tail(n int) string {
	data, _ := os.ReadFile(p.Log)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return p.Name + ".log:\n" + strings.TrimSpace(string(bytes.Join(lines, []byte("\n"))))
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
