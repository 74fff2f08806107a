package main

import (
	"errors"
	"io"
)

// ImportCmd is `bind-fn import`.
type ImportCmd struct {
	Conf string `arg:"" help:"named.conf of the server to import."`
}

// Run imports.
func (c *ImportCmd) Run(out, errw io.Writer) (int, error) {
	return 1, errors.New("not implemented yet")
}
