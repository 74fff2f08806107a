package importer_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

// TestGoldenImports imports every testdata/<case>/named.conf (its first
// comment says what it shows) and compares the package, the key Secrets and
// the report (what is not carried, with file:line) with golden/.
func TestGoldenImports(t *testing.T) {
	confs, err := filepath.Glob(filepath.Join("testdata", "*", "named.conf"))
	corpus, cerr := filepath.Glob(filepath.Join("testdata", "corpus", "*", "named.conf"))
	if err != nil || cerr != nil || len(confs) == 0 || len(corpus) == 0 {
		t.Fatalf("no cases: %v %v", err, cerr)
	}
	for _, conf := range append(confs, corpus...) {
		dir := filepath.Dir(conf)
		name := strings.TrimPrefix(filepath.ToSlash(dir), "testdata/")
		t.Run(name, func(t *testing.T) {
			got := importFiles(t, conf)
			files := map[string][]byte{}
			for name, data := range got {
				files[name] = []byte(data)
			}
			golden.CheckDir(t, filepath.Join(dir, "golden"), files)
		})
	}
}

// importFiles imports conf the way the CLI does and returns every output
// file: the package's files (its state under rendered/), secrets.yaml and
// report.txt.
func importFiles(t *testing.T, conf string) map[string]string {
	t.Helper()
	res := importResult(t, conf)
	out := map[string]string{}
	for name, objs := range res.Objects {
		b, err := importer.YAML(objs)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	state, err := res.StateFiles()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range state {
		out[name] = string(b)
	}
	var secrets []any
	for _, s := range res.Secrets {
		secrets = append(secrets, s)
	}
	if len(secrets) > 0 {
		b, err := importer.YAML(secrets)
		if err != nil {
			t.Fatal(err)
		}
		out["secrets.yaml"] = string(b)
	}
	var rep []string
	for _, l := range res.Replaced {
		rep = append(rep, "replaced     "+l.String())
	}
	for _, l := range res.Losses {
		rep = append(rep, "NOT CARRIED  "+l.String())
	}
	out["report.txt"] = fmt.Sprintf("lossless: %v\n%s\n", len(res.Losses) == 0, strings.Join(rep, "\n"))
	return out
}

// importResult imports conf the way the CLI does (zone files and signed
// serials read by BIND's named-checkzone) and checks it.
func importResult(t *testing.T, conf string) *importer.Result {
	t.Helper()
	dir := filepath.Dir(conf)
	// remap.txt ("<absolute prefix> <directory relative to the case>")
	// stands a copied system configuration where its paths point.
	read, exists := os.ReadFile, func(p string) bool { _, err := os.Stat(p); return err == nil }
	local, unlocal := func(p string) string { return p }, func(p string) string { return p }
	if b, err := os.ReadFile(filepath.Join(dir, "remap.txt")); err == nil {
		from, to, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		local = func(p string) string {
			if p == from {
				return filepath.Join(dir, to)
			}
			if rest, ok := strings.CutPrefix(p, from+"/"); ok {
				return filepath.Join(dir, to, rest)
			}
			return p
		}
		base := filepath.Join(dir, to)
		unlocal = func(p string) string {
			if rest, ok := strings.CutPrefix(p, base+"/"); ok {
				return from + "/" + rest
			}
			return p
		}
		read = func(p string) ([]byte, error) { return os.ReadFile(local(p)) }
		exists = func(p string) bool { _, err := os.Stat(local(p)); return err == nil }
		conf = from + "/named.conf"
		dir = from
	}
	stmts, err := namedconf.ReadConf(conf, dir, read)
	if err != nil {
		t.Fatal(err)
	}
	named := importer.NamedZoneReader(bindtools.BINDPath(t, "named-checkzone"))
	readZone := func(origin, file, journal, zdir string) ([]dns.RR, error) {
		if journal != "" {
			journal = local(journal)
		}
		return named(origin, local(file), journal, local(zdir))
	}
	glob := func(p string) ([]string, error) {
		l, err := filepath.Glob(local(p))
		for i := range l {
			l[i] = unlocal(l[i])
		}
		return l, err
	}
	signed := importer.NamedSignedSerial(bindtools.BINDPath(t, "named-checkzone"))
	signedSerial := func(origin, file string) (uint32, error) { return signed(origin, local(file)) }
	res, err := importer.Import(stmts, importer.Options{ZoneDir: importer.ZoneDir(stmts, dir), Read: read, Exists: exists, ReadZone: readZone, Glob: glob, SignedSerial: signedSerial})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := res.Check(&testutil.DetRand{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.HasErrors() {
		t.Fatalf("the import does not render: %v", rs)
	}
	return res
}
