// Command bind-fn-gen writes a large, realistic bind.unkin.net package,
// deterministic by seed, for benchmarks and scale tests:
//
//	bind-fn-gen -zones 100 -records 100000 -seed 1 -views 2 > rl.yaml
//	bind-fn-gen -zones 100 -records 100000 -o pkg/   # a package directory
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"git.unkin.net/unkin/bind-fn/test/gen"
)

func main() {
	var o gen.Options
	flag.IntVar(&o.Zones, "zones", 10, "number of primary zones (every eighth is a reverse zone)")
	flag.IntVar(&o.Records, "records", 1000, "number of records (RRsets), spread over the zones")
	flag.Uint64Var(&o.Seed, "seed", 1, "seed: the same options give the same bytes")
	flag.IntVar(&o.Views, "views", 0, "number of BindViews (0: no views)")
	flag.Float64Var(&o.RecordObjects, "dnsrecords", 0.1, "share of records written as DNSRecord objects (0 for none)")
	flag.IntVar(&o.Dynamic, "dynamic", 0, "make every n-th zone dynamic (0: none)")
	flag.StringVar(&o.Cluster, "cluster", "gen", "BindCluster name")
	flag.StringVar(&o.Namespace, "namespace", "dns", "namespace of every object")
	out := flag.String("o", "", "write a package directory (one file per kind) instead of a ResourceList on stdout")
	zoneDir := flag.String("zone-dir", "", "also write every zone file (whole, serial 1) into this directory, and zones.list (origin and file per line) for named-checkzone")
	flag.Parse()
	if o.RecordObjects == 0 {
		o.RecordObjects = -1
	}
	if err := run(o, *out, *zoneDir); err != nil {
		fmt.Fprintf(os.Stderr, "bind-fn-gen: %v\n", err)
		os.Exit(1)
	}
}

func run(o gen.Options, dir, zoneDir string) error {
	p := gen.Generate(o)
	if zoneDir != "" {
		if err := writeZones(p, zoneDir); err != nil {
			return err
		}
	}
	if dir == "" {
		_, err := os.Stdout.Write(p.ResourceList())
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range p.FileNames() {
		if err := os.WriteFile(filepath.Join(dir, f), p.File(f), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeZones(p *gen.Package, dir string) error {
	zones, err := p.ZoneFiles()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var list []byte
	for _, z := range zones {
		name := z.Origin + ".db"
		if z.View != "" {
			name = z.View + "_" + name
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, z.Text, 0o644); err != nil {
			return err
		}
		list = fmt.Appendf(list, "%s %s\n", z.Origin, f)
	}
	return os.WriteFile(filepath.Join(dir, "zones.list"), list, 0o644)
}
