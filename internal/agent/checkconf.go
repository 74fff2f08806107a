package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CheckError is a config named-checkconf rejected.
type CheckError struct {
	File    string
	Line    int
	Message string // checkconf's first located message, else its whole output
	Output  string
}

func (e *CheckError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("named-checkconf rejected the config: %s:%d: %s", e.File, e.Line, e.Message)
	}
	return "named-checkconf rejected the config: " + e.Message
}

var locatedLine = regexp.MustCompile(`(?m)^(?:zone [^:]+: |dns_[a-z_]+: )?(/[^:\s]+|[^:\s]+\.[^:\s]+):(\d+): (.*)$`)

// ParseCheckOutput extracts the first file:line message from named-checkconf output.
func ParseCheckOutput(out string) *CheckError {
	e := &CheckError{Output: out, Message: strings.TrimSpace(out)}
	if m := locatedLine.FindStringSubmatch(out); m != nil {
		e.File = m[1]
		e.Line, _ = strconv.Atoi(m[2])
		e.Message = strings.TrimSpace(m[3])
	}
	if e.Message == "" {
		e.Message = "(no output)"
	}
	return e
}

// RunNamedCheckconf runs `named-checkconf -z conf` (the config and every
// zone file it loads); a rejection is a *CheckError.
func RunNamedCheckconf(ctx context.Context, bin, conf string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-z", conf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return ParseCheckOutput(out.String())
	}
	return fmt.Errorf("cannot run %s: %w", bin, err)
}
