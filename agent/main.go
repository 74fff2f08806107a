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
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "--version", "-version", "version":
			fmt.Println(version.Line("bind-fn-agent"))
			return
		case "run", "copy-self", "drain", "-h", "-help", "--help", "help":
		default:
			// One line and a hint, not the whole usage (agent.Main's
			// answer when there is no command at all).
			fmt.Fprintf(os.Stderr, "bind-fn-agent: error: unknown command %q\nRun \"bind-fn-agent --help\" for usage.\n", os.Args[1])
			os.Exit(2)
		}
	}
	os.Exit(agent.Main(context.Background(), os.Args[1:], os.Getenv, os.Stderr))
}
