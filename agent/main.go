// Command bind-fn-agent runs in the named container of a bind-fn pod: it
// prepares what the render cannot know, runs `named -g`, and applies config
// changes without restarting it. See internal/agent.
package main

import (
	"context"
	"fmt"
	"os"

	"git.unkin.net/unkin/bind-fn/internal/agent"
	"git.unkin.net/unkin/bind-fn/internal/version"
)

func main() {
	// The version is the program's own; every command, and the answer to
	// an unknown one, is agent.Main's (one list of commands).
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "--version", "-version", "version":
			fmt.Println(version.Line("bind-fn-agent"))
			return
		}
	}
	os.Exit(agent.Main(context.Background(), os.Args[1:], os.Getenv, os.Stderr))
}
