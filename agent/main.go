// Command bind-fn-agent runs in the named container of a bind-fn pod: it
// prepares what the render cannot know, runs `named -g`, and applies config
// changes without restarting it. See internal/agent.
package main

import (
	"context"
	"os"

	"git.unkin.net/unkin/bind-fn/internal/agent"
)

func main() {
	os.Exit(agent.Main(context.Background(), os.Args[1:], os.Getenv, os.Stderr))
}
