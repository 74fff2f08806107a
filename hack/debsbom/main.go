// Command debsbom writes the CycloneDX SBOM of the BIND image: the Debian
// packages its files come from, read from the root's dpkg database (status
// and info/*.list; hack/bind-image.sh writes one for roots it only unpacked).
// No maintained SBOM tool builds here for Debian packages (syft, the one
// that reads dpkg databases, is not among the pinned tools), and the list
// is small: a package is in the SBOM when a file of the image is in its
// .list, and a file no package owns is an error.
//
//	debsbom -admindir ROOT/var/lib/dpkg -files FILES -o OUT.json -name REPO -version V
//	debsbom -merge -o OUT.json A.json B.json     one SBOM of several architectures' packages
//
// The output is deterministic: components sorted by purl, the timestamp
// SOURCE_DATE_EPOCH (else the Unix epoch), no random serial number.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// BOM is the part of a CycloneDX 1.5 document debsbom writes.
type BOM struct {
	BOMFormat   string      `json:"bomFormat"`
	SpecVersion string      `json:"specVersion"`
	Version     int         `json:"version"`
	Metadata    Metadata    `json:"metadata"`
	Components  []Component `json:"components"`
}

// Metadata names the image the SBOM describes.
type Metadata struct {
	Timestamp string    `json:"timestamp"`
	Tools     Tools     `json:"tools"`
	Component Component `json:"component"`
}

// Tools lists what wrote the SBOM.
type Tools struct {
	Components []Component `json:"components"`
}

// Component is one package (or the image itself).
type Component struct {
	Type    string `json:"type"`
	BOMRef  string `json:"bom-ref,omitempty"`
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	PURL    string `json:"purl,omitempty"`
}

// Package is one stanza of a dpkg status file.
type Package struct{ Name, Version, Arch string }

func main() {
	if err := run(os.Args[1:], os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "debsbom:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader) error {
	fs := flag.NewFlagSet("debsbom", flag.ContinueOnError)
	var (
		admindir = fs.String("admindir", "", "dpkg database directory (status, info/*.list)")
		files    = fs.String("files", "", "file listing the image's files as absolute paths in the root, one a line; - for stdin")
		out      = fs.String("o", "", "output SBOM (required)")
		name     = fs.String("name", "", "the image's repository, the SBOM's subject")
		version  = fs.String("version", "", "the image's version")
		merge    = fs.Bool("merge", false, "merge the SBOMs given as arguments into one")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-o is required")
	}
	var bom BOM
	if *merge {
		b, err := mergeFiles(fs.Args())
		if err != nil {
			return err
		}
		bom = b
	} else {
		if *admindir == "" || *files == "" || *name == "" {
			return errors.New("-admindir, -files, -name and -o are required (or -merge)")
		}
		r := stdin
		if *files != "-" {
			f, err := os.Open(*files)
			if err != nil {
				return err
			}
			defer f.Close()
			r = f
		}
		var paths []string
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if p := strings.TrimSpace(sc.Text()); p != "" {
				paths = append(paths, p)
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		pkgs, err := Owners(*admindir, paths)
		if err != nil {
			return err
		}
		epoch, err := epochFromEnv()
		if err != nil {
			return err
		}
		bom = New(*name, *version, epoch, pkgs)
	}
	return writeJSON(*out, bom)
}

func writeJSON(file string, bom BOM) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // a purl's & stays readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(bom); err != nil {
		return err
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}

// New is the SBOM of the image name:version holding pkgs.
func New(name, version string, epoch time.Time, pkgs []Package) BOM {
	bom := BOM{
		BOMFormat: "CycloneDX", SpecVersion: "1.5", Version: 1,
		Metadata: Metadata{
			Timestamp: epoch.UTC().Format(time.RFC3339),
			Tools:     Tools{Components: []Component{{Type: "application", Name: "bind-fn hack/debsbom"}}},
			Component: Component{Type: "container", Name: name, Version: version},
		},
		Components: []Component{},
	}
	for _, p := range pkgs {
		purl := PURL(p)
		bom.Components = append(bom.Components, Component{Type: "library", BOMRef: purl, Name: p.Name, Version: p.Version, PURL: purl})
	}
	sortComponents(bom.Components)
	return bom
}

// PURL is the package URL of a Debian trixie package.
func PURL(p Package) string {
	return "pkg:deb/debian/" + p.Name + "@" + strings.ReplaceAll(p.Version, ":", "%3A") + "?arch=" + p.Arch + "&distro=debian-13"
}

func sortComponents(cs []Component) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].PURL < cs[j].PURL })
}

// Owners returns the packages (from admindir's status) whose .list holds
// one of paths, sorted by name and architecture.
func Owners(admindir string, paths []string) ([]Package, error) {
	status, err := readStatus(filepath.Join(admindir, "status"))
	if err != nil {
		return nil, err
	}
	lists, err := filepath.Glob(filepath.Join(admindir, "info", "*.list"))
	if err != nil {
		return nil, err
	}
	owner := map[string]string{} // path -> package name (as the .list is named)
	for _, l := range lists {
		pkg := strings.TrimSuffix(filepath.Base(l), ".list")
		b, err := os.ReadFile(l)
		if err != nil {
			return nil, err
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if line != "" {
				owner[line] = pkg
			}
		}
	}
	seen := map[string]bool{}
	var pkgs []Package
	for _, p := range paths {
		o, ok := owner[p]
		if !ok {
			return nil, fmt.Errorf("cannot name the package of %s: no .list in %s holds it", p, filepath.Join(admindir, "info"))
		}
		if seen[o] {
			continue
		}
		seen[o] = true
		name, _, _ := strings.Cut(o, ":")
		st, ok := status[name]
		if !ok {
			return nil, fmt.Errorf("cannot name the version of %s (owner of %s): not in %s", name, p, filepath.Join(admindir, "status"))
		}
		pkgs = append(pkgs, st)
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Name+"/"+pkgs[i].Arch < pkgs[j].Name+"/"+pkgs[j].Arch })
	return pkgs, nil
}

// readStatus reads the installed (or unpacked) packages of a dpkg status
// file by name.
func readStatus(file string) (map[string]Package, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pkgs := map[string]Package{}
	for stanza := range strings.SplitSeq(string(b), "\n\n") {
		var p Package
		var status string
		for line := range strings.SplitSeq(stanza, "\n") {
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			switch k {
			case "Package":
				p.Name = v
			case "Version":
				p.Version = v
			case "Architecture":
				p.Arch = v
			case "Status":
				status = v
			}
		}
		if p.Name == "" || !(strings.HasSuffix(status, " installed") || strings.HasSuffix(status, " unpacked")) {
			continue
		}
		pkgs[p.Name] = p
	}
	return pkgs, nil
}

// mergeFiles merges SBOMs of one image's architectures: the first's
// metadata, every component once.
func mergeFiles(files []string) (BOM, error) {
	if len(files) == 0 {
		return BOM{}, errors.New("cannot merge: no SBOMs given")
	}
	var out BOM
	seen := map[string]bool{}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return BOM{}, err
		}
		var bom BOM
		if err := json.Unmarshal(b, &bom); err != nil {
			return BOM{}, fmt.Errorf("cannot read %s: %w", f, err)
		}
		if i == 0 {
			out = bom
			out.Components = nil
		}
		for _, c := range bom.Components {
			if !seen[c.PURL] {
				seen[c.PURL] = true
				out.Components = append(out.Components, c)
			}
		}
	}
	sortComponents(out.Components)
	return out, nil
}

func epochFromEnv() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot parse SOURCE_DATE_EPOCH %q: want Unix seconds", s)
	}
	return time.Unix(n, 0).UTC(), nil
}
