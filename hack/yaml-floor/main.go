// Command yaml-floor is the decoding floor of the one-zone benchmark
// (hack/bench.sh): the least any fn-validate built on a maintained YAML
// library must do. It reads the ResourceList, parses every item on its own
// with yaml.v2 (the fastest maintained Go YAML parser measured here, and
// the one sigs.k8s.io/yaml uses) into nothing, and writes the input back.
// No field is decoded, nothing is checked, no zone is built: whatever it
// costs in CPU and memory, fn-validate cannot cost less.
//
// It cuts the items at top-level "- " lines, which is how bind-fn-gen
// writes a ResourceList; it is a benchmark tool, not a KRM function, and
// fails on input it cannot parse.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	yaml2 "go.yaml.in/yaml/v2"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "yaml-floor:", err)
		os.Exit(1)
	}
}

func run(r io.Reader, w io.Writer) error {
	in, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	sep := []byte("\n- ")
	first := bytes.Index(in, sep)
	if first < 0 {
		return fmt.Errorf("no items")
	}
	var head struct {
		Kind string `yaml:"kind"`
	}
	if err := yaml2.Unmarshal(in[:first], &head); err != nil || head.Kind != "ResourceList" {
		return fmt.Errorf("not a ResourceList (%v)", err)
	}
	// Each item, from its "- " to the next, is a sequence of one mapping.
	for i, rest := 0, in[first+1:]; len(rest) > 0; i++ {
		item := rest
		if end := bytes.Index(rest, sep); end >= 0 {
			item, rest = rest[:end+1], rest[end+1:]
		} else {
			rest = nil
		}
		var seq []struct{}
		if err := yaml2.Unmarshal(item, &seq); err != nil || len(seq) != 1 {
			return fmt.Errorf("item %d: %d documents (%v)", i, len(seq), err)
		}
	}
	_, err = w.Write(in)
	return err
}
