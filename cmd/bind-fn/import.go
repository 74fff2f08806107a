package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/importer/verify"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// Exit codes of import.
const (
	exitLossless = 0
	exitLossy    = 2
)

// ImportCmd is `bind-fn import`.
type ImportCmd struct {
	Conf      string   `arg:"" optional:"" help:"named.conf of the server to import (includes are followed)." type:"existingfile"`
	Out       string   `short:"o" required:"" help:"Directory to write the kpt package into." type:"path"`
	ZoneDir   string   `help:"Where relative zone file names (and includes) are found (default: the options directory, else the directory of named.conf)." type:"path"`
	Cluster   string   `default:"bind" help:"Name of the BindCluster."`
	Namespace string   `default:"dns" help:"Namespace of every object."`
	Replicas  int32    `default:"2" help:"Replicas of the BindCluster."`
	Secrets   string   `help:"File for the key Secrets (default: <out>.secrets.yaml beside the package, never inside it)." type:"path"`
	NoSecrets bool     `help:"Write no key material: create the Secrets yourself (importExisting keys)."`
	AXFR      string   `name:"axfr" help:"Transfer zones live from this server (host[:port]) instead of (or over) their files." placeholder:"SERVER"`
	Zone      []string `help:"Zone to transfer with --axfr (repeatable); view/zone to replace a zone of one view."`
	Key       string   `help:"TSIG key for --axfr: [algorithm:]name:secret (as dig -y)."`
	Format    string   `enum:"text,json" default:"text" help:"Report format on stderr."`
	Verify    bool     `help:"Check the import with real BIND (needs root, named and unshare): serve the original configuration (scratch overlays keep its files unchanged) and the rendered package (the agent and named, as a pod runs them) side by side in private network namespaces, and compare every zone by AXFR, serials and DNSKEYs, sample queries from an address each view matches, and the NOTIFYs both send. Every difference is listed as not carried. Nothing is left on the host: every path it needs is made in its own mount namespace."`
	BINDRoot  string   `name:"bind-root" help:"With --verify: a BIND root (a directory holding usr/sbin/named, such as bin/bind-9.20) whose /usr both servers run from, instead of the host's named." type:"existingdir"`
}

// Run imports. Exit code: 0 lossless, 2 something could not be carried
// (listed), 1 error.
func (c *ImportCmd) Run(out, errw io.Writer) (int, error) {
	if c.Conf == "" && c.AXFR == "" {
		return 1, fmt.Errorf("give a named.conf, or --axfr SERVER --zone ZONE")
	}
	if c.AXFR != "" && len(c.Zone) == 0 {
		return 1, fmt.Errorf("--axfr needs at least one --zone")
	}
	if c.Verify && !verify.Inside() {
		// The whole import runs again inside private namespaces (it is
		// deterministic), where the verify may add addresses and mounts.
		self, err := os.Executable()
		if err != nil {
			return 1, err
		}
		return verify.Enter(append([]string{self}, os.Args[1:]...), out, errw)
	}
	if c.Secrets != "" {
		if rel, err := filepath.Rel(c.Out, c.Secrets); err == nil && !strings.HasPrefix(rel, "..") {
			return 1, fmt.Errorf("--secrets %s is inside the package %s: key material must stay out of it (kpt would render it and git would keep it)", c.Secrets, c.Out)
		}
	}
	opt := importer.Options{Cluster: c.Cluster, Namespace: c.Namespace, Replicas: c.Replicas, ZoneDir: c.ZoneDir,
		Read: os.ReadFile, Exists: func(p string) bool { _, err := os.Stat(p); return err == nil }, Glob: filepath.Glob}
	opt.ReadZone, opt.SignedSerial = importer.LookNamedZoneReader()
	var conf []namedconf.Located
	if c.Conf != "" {
		base := c.ZoneDir
		if base == "" {
			base = filepath.Dir(c.Conf)
		}
		var err error
		if conf, err = namedconf.ReadConf(c.Conf, base, os.ReadFile); err != nil {
			return 1, err
		}
		if opt.ZoneDir == "" {
			opt.ZoneDir = importer.ZoneDir(conf, base)
		}
	}
	res, err := importer.Import(conf, opt)
	if err != nil {
		return 1, err
	}
	if c.AXFR != "" {
		var key *importer.TSIG
		if c.Key != "" {
			if key, err = importer.ParseTSIG(c.Key); err != nil {
				return 1, err
			}
		}
		for _, z := range c.Zone {
			view, zone, ok := strings.Cut(z, "/")
			if !ok {
				view, zone = "", z
			}
			rrs, err := importer.Transfer(c.AXFR, zone, key, 10*time.Second)
			if err != nil {
				return 1, err
			}
			res.AddZone(view, zone, "axfr:"+c.AXFR+"/"+zone, rrs)
		}
	}
	rs, err := res.Check(rand.Reader)
	if err != nil {
		return 1, err
	}
	if err := c.write(res); err != nil {
		return 1, err
	}
	if c.Verify && !rs.HasErrors() {
		if err := c.verify(res, conf, opt.ZoneDir, errw); err != nil {
			return 1, err
		}
	}
	if err := report(errw, res, c.Format, !rs.HasErrors()); err != nil {
		return 1, err
	}
	if rs.HasErrors() {
		for _, r := range rs {
			fmt.Fprintln(errw, r)
		}
		return 1, fmt.Errorf("the imported package does not render (above); it is written to %s for you to fix", c.Out)
	}
	if len(res.Losses) > 0 {
		return exitLossy, nil
	}
	return exitLossless, nil
}

// verify runs the import's package and the original under real BIND
// (internal/importer/verify); every difference becomes a loss.
func (c *ImportCmd) verify(res *importer.Result, conf []namedconf.Located, zoneDir string, errw io.Writer) error {
	if c.Conf == "" {
		return fmt.Errorf("--verify needs the named.conf of the server (it serves it to compare)")
	}
	named, usr, err := c.named()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(c.Conf)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "bind-fn-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	losses, sum, err := verify.Run(verify.Options{Conf: abs, ZoneDir: zoneDir, Result: res, Named: named, Usr: usr, ListenOn: verify.ListenOn(conf),
		Agent: []string{self, AgentWord}, Work: work, Log: errw})
	if err != nil {
		return fmt.Errorf("cannot verify with BIND: %w", err)
	}
	for _, n := range sum.Notes {
		fmt.Fprintf(errw, "verify note  %s\n", n)
	}
	fmt.Fprintf(errw, "verified by BIND: %d zones by AXFR, %d queries, %d NOTIFYs; %d difference(s)\n", sum.Zones, sum.Queries, sum.Notifies, len(losses))
	res.Losses = append(res.Losses, losses...)
	return nil
}

// named is the named the verify runs and the /usr it runs from (the
// host's, or --bind-root's).
func (c *ImportCmd) named() (named, usr string, err error) {
	if c.BINDRoot != "" {
		usr, err = filepath.Abs(filepath.Join(c.BINDRoot, "usr"))
		if err != nil {
			return "", "", err
		}
		if _, err := os.Stat(filepath.Join(usr, "sbin", "named")); err != nil {
			return "", "", fmt.Errorf("--bind-root %s holds no usr/sbin/named: %w", c.BINDRoot, err)
		}
		return "/usr/sbin/named", usr, nil
	}
	named, err = exec.LookPath("named")
	if err != nil {
		if named, err = exec.LookPath("/usr/sbin/named"); err != nil {
			return "", "", fmt.Errorf("--verify needs BIND's named: %w", err)
		}
	}
	return named, "", nil
}

// AgentWord, as bind-fn's first argument, runs the agent (the verify's
// pod runs bind-fn in place of bind-fn-agent).
const AgentWord = "verify-agent"

// importFiles are every file name an import writes objects to.
var importFiles = []string{"acls.yaml", "catalog.yaml", "cluster.yaml", "dnssec.yaml", "keys.yaml", "policies.yaml", "views.yaml", "zones.yaml"}

const kptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: %s
  annotations:
    config.kubernetes.io/local-config: "true"
info:
  description: Imported by bind-fn import from %s.
pipeline:
  validators:
    - image: git.unkin.net/unkin/bind-fn/fn-validate:v0.1.0
  mutators:
    - image: git.unkin.net/unkin/bind-fn/fn-render:v0.1.0
`

func (c *ImportCmd) write(res *importer.Result) error {
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return err
	}
	var files []string
	for f := range res.Objects {
		files = append(files, f)
	}
	sort.Strings(files)
	// A file an earlier import wrote and this one does not would leave
	// stale objects in the package.
	for _, f := range importFiles {
		if _, ok := res.Objects[f]; !ok {
			if err := os.Remove(filepath.Join(c.Out, f)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	for _, f := range files {
		b, err := importer.YAML(res.Objects[f])
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(c.Out, f), b, 0o644); err != nil {
			return err
		}
	}
	if err := c.writeState(res); err != nil {
		return err
	}
	src := c.Conf
	if src == "" {
		src = c.AXFR
	}
	if err := os.WriteFile(filepath.Join(c.Out, "Kptfile"), fmt.Appendf(nil, kptfile, c.Cluster, filepath.Base(src)), 0o644); err != nil {
		return err
	}
	if c.NoSecrets || len(res.Secrets) == 0 {
		return nil
	}
	path := c.Secrets
	if path == "" {
		path = filepath.Clean(c.Out) + ".secrets.yaml"
	}
	var objs []any
	for _, s := range res.Secrets {
		objs = append(objs, s)
	}
	b, err := importer.YAML(objs)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// writeState writes the imported zones' state (each zone's served serial
// and content hash, in the zones ConfigMaps a render leaves) where a render
// of the package writes them: its first render reads them as the previous
// output, so it keeps the served serials and counts up from them
// (docs/import.md#serials). Zones ConfigMaps of the cluster an earlier
// import or render left there and this import does not write are removed:
// they would hold another server's state. A package that does not render
// has no state (its serials stay pinned): rendered/ is left as it was.
func (c *ImportCmd) writeState(res *importer.Result) error {
	files, err := res.StateFiles()
	if err != nil || len(files) == 0 {
		return err
	}
	dir := filepath.Join(c.Out, "rendered", c.Cluster)
	old, err := filepath.Glob(filepath.Join(dir, "configmap_"+c.Cluster+"-zones-*.yaml"))
	if err != nil {
		return err
	}
	for _, p := range old {
		rel, err := filepath.Rel(c.Out, p)
		if err != nil {
			return err
		}
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	for p, b := range files {
		p = filepath.Join(c.Out, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// report lists what was replaced and what was not carried. The import is
// lossless only when nothing was lost and the package renders.
func report(w io.Writer, res *importer.Result, format string, renders bool) error {
	lossless := len(res.Losses) == 0 && renders
	if format == "json" {
		b, err := json.MarshalIndent(map[string]any{"lossless": lossless, "renders": renders, "losses": res.Losses, "replaced": res.Replaced}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for _, l := range res.Replaced {
		fmt.Fprintf(w, "replaced  %s\n", l)
	}
	for _, l := range res.Losses {
		fmt.Fprintf(w, "NOT CARRIED  %s\n", l)
	}
	switch {
	case lossless:
		fmt.Fprintln(w, "import is lossless: every statement is carried, every zone renders with the same RRsets and serial")
	case !renders:
		fmt.Fprintf(w, "the imported package does not render; %d statement(s) or RRset(s) not carried (above)\n", len(res.Losses))
	default:
		fmt.Fprintf(w, "%d statement(s) or RRset(s) not carried (above)\n", len(res.Losses))
	}
	return nil
}
