// Command fnprof runs fn-render or fn-validate in process on a ResourceList
// file with pprof profiles, for hack/bench.sh and BENCHMARKS.md:
//
//	go run ./hack/fnprof -mode render -cpuprofile cpu.out -memprofile mem.out rl.yaml
//	go tool pprof -top cpu.out
package main

import (
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/krm"
)

func main() {
	mode := flag.String("mode", "render", "render or validate")
	cpu := flag.String("cpuprofile", "", "write a CPU profile")
	mem := flag.String("memprofile", "", "write an allocation profile (alloc_space)")
	flag.Parse()
	if err := run(*mode, *cpu, *mem, flag.Arg(0)); err != nil {
		fmt.Fprintf(os.Stderr, "fnprof: %v\n", err)
		os.Exit(1)
	}
}

func run(mode, cpu, mem, file string) error {
	in, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	p := &krm.Processor{Mode: krm.RenderMode, Rand: rand.Reader}
	if mode == "validate" {
		p.Mode = krm.ValidateMode
	}
	if mem != "" {
		runtime.MemProfileRate = 64 << 10
	}
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	out, err := p.Run(in)
	fmt.Fprintf(os.Stderr, "fnprof: %s of %d bytes: %d bytes out in %v (err %v)\n", mode, len(in), len(out), time.Since(start), err)
	_, _ = io.Discard.Write(out)
	if mem != "" {
		f, err := os.Create(mem)
		if err != nil {
			return err
		}
		defer f.Close()
		return pprof.Lookup("allocs").WriteTo(f, 0)
	}
	return nil
}
