package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/pkgdir"
)

func TestPlanExitCodes(t *testing.T) {
	base := filepath.Join("..", "..", "internal", "plan", "testdata", "base")
	cases := map[string]struct {
		reason string
		edit   func(t *testing.T, dir string)
		want   int
		output string
	}{
		"NoChange": {
			reason: "The same inputs plan nothing: exit 0, CI labels the pull request as no DNS change.",
			edit:   func(*testing.T, string) {},
			want:   exitNoChange,
			output: "No changes.",
		},
		"DNSChange": {
			reason: "A record change is a DNS change: exit 2.",
			edit: func(t *testing.T, dir string) {
				pkgdir.Replace(t, filepath.Join(dir, "records.yaml"), "198.51.100.30", "198.51.100.31")
			},
			want:   exitDNSChange,
			output: "+ blog.example.com. 3600 A 198.51.100.31",
		},
		"ObjectsOnly": {
			reason: "Only the image changes: the pods roll, DNS does not: exit 3.",
			edit: func(t *testing.T, dir string) {
				pkgdir.Replace(t, filepath.Join(dir, "cluster.yaml"), "bind9:9.20", "bind9:9.20.9")
			},
			want:   exitObjects,
			output: "**Rolls the pods**",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pkgdir.Copy(t, base, dir)
			tc.edit(t, dir)
			var out bytes.Buffer
			code, err := (&PlanCmd{Dir: dir, Old: base, Format: "markdown", MaxRRsets: 40, MaxZones: 25}).Run(&out)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.want || !strings.Contains(out.String(), tc.output) {
				t.Errorf("%s\nexit %d (want %d), output:\n%s", tc.reason, code, tc.want, out.String())
			}
		})
	}
}

// TestPlanGit plans against a git ref: the committed package is the old
// side, the working tree the new.
func TestPlanGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is missing: apt-get install git")
	}
	repo := t.TempDir()
	pkg := filepath.Join(repo, "dns")
	pkgdir.Copy(t, filepath.Join("..", "..", "internal", "plan", "testdata", "base"), pkg)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	pkgdir.Replace(t, filepath.Join(pkg, "records.yaml"), "198.51.100.30", "198.51.100.32")
	var out bytes.Buffer
	code, err := (&PlanCmd{Dir: pkg, Git: "HEAD", Format: "json"}).Run(&out)
	if err != nil {
		t.Fatal(err)
	}
	if code != exitDNSChange || !strings.Contains(out.String(), `"198.51.100.32"`) || !strings.Contains(out.String(), "serials and generated keys start fresh") {
		t.Errorf("plan against HEAD: exit %d, output:\n%s", code, out.String())
	}
}

func TestImportExitCodes(t *testing.T) {
	cases := map[string]struct {
		reason  string
		conf    string
		want    int
		secrets bool
	}{
		"Lossless": {"Everything carried: exit 0.", "resolver", exitLossless, false},
		"Lossy":    {"Statements not carried are listed: exit 2.", "lossy", exitLossy, true},
		"Views":    {"The dynamic zone's records would become agent-owned, the secondary zone's NOTIFYs are not sent: listed, exit 2, never \"lossless\".", "views", exitLossy, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "pkg")
			var stdout, stderr bytes.Buffer
			conf := filepath.Join("..", "..", "internal", "importer", "testdata", tc.conf, "named.conf")
			code, err := (&ImportCmd{Conf: conf, Out: out, Cluster: "bind", Namespace: "dns", Replicas: 2, Format: "text"}).Run(&stdout, &stderr)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Errorf("%s\nexit %d, want %d; report:\n%s", tc.reason, code, tc.want, stderr.String())
			}
			if lossless := strings.Contains(stderr.String(), "import is lossless"); lossless != (tc.want == exitLossless) {
				t.Errorf("%s\nthe report says lossless: %v, exit %d:\n%s", tc.reason, lossless, code, stderr.String())
			}
			if !tc.secrets {
				return
			}
			if _, err := os.Stat(filepath.Join(out, "Kptfile")); err != nil {
				t.Errorf("no Kptfile written: %v", err)
			}
			// Key material never lands inside the package.
			filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("oKeutbzDytHY3")) || bytes.Contains(b, []byte("YWFhYWFh")) {
						t.Errorf("%s holds key material", p)
					}
				}
				return nil
			})
			if _, err := os.Stat(out + ".secrets.yaml"); err != nil {
				t.Errorf("the key Secrets are not written beside the package: %v", err)
			}
		})
	}
}

// TestImportDoesNotRender: an import whose package bind-fn refuses exits 1
// and never says "lossless" (it once printed "import is lossless", then
// exited 1).
func TestImportDoesNotRender(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "named.conf")
	files := map[string]string{
		conf:                       "acl \"a\\\"; }; zone \\\"evil\" { any; };\nzone \"a.example\" { type primary; file \"a.db\"; notify explicit; allow-query { \"a\\\"; }; zone \\\"evil\"; }; };\n",
		filepath.Join(dir, "a.db"): "$TTL 60\n@ SOA ns. h. 1 3600 600 1209600 300\n@ NS ns.\n",
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	code, err := (&ImportCmd{Conf: conf, Out: filepath.Join(dir, "pkg"), Cluster: "bind", Namespace: "dns", Replicas: 2, Format: "text"}).Run(&stdout, &stderr)
	if code != 1 || err == nil || strings.Contains(stderr.String(), "lossless") || !strings.Contains(stderr.String(), "the imported package does not render") {
		t.Errorf("exit %d, error %v, report:\n%s\nwant exit 1, an error, and no \"lossless\"", code, err, stderr.String())
	}
}

// TestPlanBadInput: new inputs bind-fn refuses make no plan: exit 1 with
// the error fn-render gives, naming the object, field and file.
func TestPlanBadInput(t *testing.T) {
	base := filepath.Join("..", "..", "internal", "plan", "testdata", "base")
	cases := map[string]struct {
		reason    string
		old, new  string
		wantInErr []string
	}{
		"BadAddress": {
			reason: "An A value that is no address: the render's located error.",
			old:    `"198.51.100.30"`, new: `"198.51.100.300"`,
			wantInErr: []string{"DNSRecord dns/blog (records.yaml:35) spec.values[0]: cannot parse value for type A: 198.51.100.300 is not an IPv4 address"},
		},
		"DuplicateKey": {
			reason: "A key set twice in a DNSRecord: fn-render refuses it (strict decoding), so plan must not plan the last value.",
			old:    "  ttl: 60\n", new: "  ttl: 30\n  ttl: 60\n",
			wantInErr: []string{`records.yaml:12: DNSRecord dns/shop spec.ttl: cannot read object: duplicate field "ttl"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pkgdir.Copy(t, base, dir)
			pkgdir.Replace(t, filepath.Join(dir, "records.yaml"), tc.old, tc.new)
			var out bytes.Buffer
			code, err := (&PlanCmd{Dir: dir, Old: base, Format: "markdown"}).Run(&out)
			ok := code == 1 && err != nil
			for _, w := range tc.wantInErr {
				ok = ok && strings.Contains(err.Error(), w)
			}
			if !ok {
				t.Errorf("%s\nexit %d, error %v: want exit 1 and an error with %q", tc.reason, code, err, tc.wantInErr)
			}
		})
	}
}

// TestImportAXFR: `bind-fn import --axfr SERVER --zone Z --key K` writes a
// package from a live transfer, signed with the key (a miekg/dns server on
// loopback that refuses unsigned transfers).
func TestImportAXFR(t *testing.T) {
	const secret = "c2VjcmV0LWZvci1heGZyLXRlc3QtMTIzNDU2Nzg5MA=="
	zone := []string{
		"example.net. 300 IN SOA ns1.example.net. hostmaster.example.net. 7 3600 600 1209600 300",
		"example.net. 300 IN NS ns1.example.net.",
		"ns1.example.net. 300 IN A 192.0.2.53",
		"www.example.net. 60 IN A 192.0.2.80",
		"example.net. 300 IN TXT \"v=spf1 -all\"",
	}
	var rrs []dns.RR
	for _, s := range zone {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		rrs = append(rrs, rr)
	}
	pc, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: pc, TsigSecret: map[string]string{"xfr.": secret}, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if r.IsTsig() == nil || w.TsigStatus() != nil || len(r.Question) != 1 || r.Question[0].Qtype != dns.TypeAXFR {
			m := new(dns.Msg)
			m.SetRcode(r, dns.RcodeRefused)
			_ = w.WriteMsg(m)
			return
		}
		ch := make(chan *dns.Envelope, 1)
		tr := new(dns.Transfer)
		tr.TsigSecret = map[string]string{"xfr.": secret}
		go func() { ch <- &dns.Envelope{RR: append(append([]dns.RR{}, rrs...), rrs[0])}; close(ch) }()
		_ = tr.Out(w, r, ch)
		w.Hijack()
	})}
	go func() { _ = srv.ActivateAndServe() }()
	defer func() { _ = srv.Shutdown() }()

	out := filepath.Join(t.TempDir(), "pkg")
	var stdout, stderr bytes.Buffer
	cmd := &ImportCmd{Out: out, Cluster: "bind", Namespace: "dns", Replicas: 2, Format: "text",
		AXFR: pc.Addr().String(), Zone: []string{"example.net"}, Key: "hmac-sha256:xfr:" + secret}
	code, err := cmd.Run(&stdout, &stderr)
	if err != nil || code != exitLossless {
		t.Fatalf("exit %d, %v\n%s", code, err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "zones.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"zoneName: example.net", "- 192.0.2.80", "ttl: 60", "type: primary"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("zones.yaml lacks %q:\n%s", want, b)
		}
	}
	// Unsigned, the server refuses: the import fails, naming the transfer.
	cmd.Key = ""
	if code, err := cmd.Run(&stdout, &stderr); code != 1 || err == nil || !strings.Contains(err.Error(), "AXFR example.net") {
		t.Errorf("unsigned transfer: exit %d, %v", code, err)
	}
}

// TestImportSecretsOutside: key material is never written inside the package.
func TestImportSecretsOutside(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pkg")
	conf := filepath.Join("..", "..", "internal", "importer", "testdata", "views", "named.conf")
	var stdout, stderr bytes.Buffer
	code, err := (&ImportCmd{Conf: conf, Out: out, Secrets: filepath.Join(out, "keys", "secrets.yaml"), Cluster: "bind", Namespace: "dns", Replicas: 2, Format: "text"}).Run(&stdout, &stderr)
	if code != 1 || err == nil || !strings.Contains(err.Error(), "inside the package") {
		t.Errorf("exit %d, %v: want a refusal", code, err)
	}
}

// TestImportThenRender: the package an import writes carries each zone's
// served serial as its state, not as a pin. `bind-fn render` of the
// package as written keeps the served serial (plain.example: 10), the
// first edit renders the next one (11), and a render of the edited package
// again keeps 11. With the serial pinned in spec.soa.serial (imports before
// this one) the edit was refused: "cannot change zone ... without changing
// its serial 10".
func TestImportThenRender(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pkg")
	conf := filepath.Join("..", "..", "internal", "importer", "testdata", "signed", "named.conf")
	var stdout, stderr bytes.Buffer
	if code, err := (&ImportCmd{Conf: conf, Out: out, Cluster: "bind", Namespace: "dns", Replicas: 2, Format: "text"}).Run(&stdout, &stderr); code == 1 || err != nil {
		t.Fatalf("import: exit %d, %v\n%s", code, err, stderr.String())
	}
	zones, err := os.ReadFile(filepath.Join(out, "zones.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(zones, []byte("serial:")) {
		t.Errorf("zones.yaml pins a serial:\n%s", zones)
	}
	serial := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(out, "rendered", "bind", "configmap_bind-zones-0.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 6 && f[0] == "plain.example." && f[3] == "SOA" {
				return f[6]
			}
		}
		t.Fatalf("no SOA of plain.example in the rendered zones:\n%s", b)
		return ""
	}
	render := func(step string) {
		t.Helper()
		var errb bytes.Buffer
		if code, err := (&RenderCmd{Dir: out}).Run(&errb); code != 0 || err != nil {
			t.Fatalf("%s: render: exit %d, %v\n%s", step, code, err, errb.String())
		}
	}
	steps := []struct {
		reason string
		edit   func([]byte) []byte
		want   string
	}{
		{"as imported: the served serial", nil, "10"},
		{"rendered unchanged: kept", nil, "10"},
		{"a record edited: the next serial", func(b []byte) []byte { return bytes.Replace(b, []byte("198.51.100.66"), []byte("198.51.100.67"), 1) }, "11"},
		{"rendered unchanged again: kept", nil, "11"},
	}
	for i, s := range steps {
		if s.edit != nil {
			b, err := os.ReadFile(filepath.Join(out, "zones.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, "zones.yaml"), s.edit(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if i > 0 {
			render(s.reason)
		}
		if got := serial(); got != s.want {
			t.Errorf("%s: plain.example serial %s, want %s", s.reason, got, s.want)
		}
	}
}

// TestImportVerify runs `bind-fn import --verify` as a user would (bin/bind-fn,
// as root): an import BIND finds identical exits 0 and says so; one whose
// signed zone has no keys to carry exits 2 with BIND's DNSKEY difference
// listed.
func TestImportVerify(t *testing.T) {
	bindtools.RequireRoot(t)
	bindtools.RequireBIND(t)
	bin := bindtools.Bin(t, "bind-fn")
	cases := map[string]struct {
		reason string
		conf   string
		want   int
		output []string
	}{
		"Identical": {"The classes configuration: every zone, query, recursion probe and NOTIFY the same under BIND.", "classes", exitLossless,
			[]string{"verified by BIND: 5 zones by AXFR", "0 difference(s)", "import is lossless"}},
		"KeysMissing": {"The signed configuration has no keys in its key directory: BIND signs the original with none, the render with new keys.", "signed", exitLossy,
			[]string{"zone secure.example DNSKEY", "not carried (above)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			conf := filepath.Join(bindtools.RepoRoot(t), "internal", "importer", "testdata", tc.conf, "named.conf")
			args := []string{"import", "--verify", conf, "-o", filepath.Join(t.TempDir(), "pkg")}
			if usr := bindtools.Current(t).Usr(t); usr != "" {
				args = append(args, "--bind-root", filepath.Dir(usr))
			}
			out, code := pkgdir.Run(t, bin, args...)
			ok := code == tc.want
			for _, w := range tc.output {
				ok = ok && strings.Contains(out, w)
			}
			if !ok {
				t.Errorf("%s\nexit %d (want %d), output:\n%s", tc.reason, code, tc.want, out)
			}
		})
	}
}
