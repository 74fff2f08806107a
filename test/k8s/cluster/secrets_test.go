//go:build cluster

package cluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
	"git.unkin.net/unkin/bind-fn/test/k8s/fixture"
)

// sopsMarker precedes docs/security.md's SOPS recipe, which
// TestExternalSecrets runs as written.
const sopsMarker = "<!-- runnable: sops"

// edOwnerID is external-dns's --txt-owner-id on the kubelet cluster.
const edOwnerID = "bind-fn-kubelet"

// TestExternalSecrets: examples/authoritative with spec.secrets external on
// the kubelet, its Secrets made apart from the package by docs/security.md's
// SOPS recipe, run as written (the real age-keygen, sops, BIND's
// dnssec-keygen and kubectl against the API server): the encrypted files
// hold no material; the render's info results name exactly the Secrets the
// recipe made; the rendered package holds no key material; applied, every
// pod is Ready, serves both views, the secondaries hold the zones they
// transferred with the external transfer keys, the signed zone carries the
// key dnssec-keygen made, and the real external-dns, reading a Service from
// the API server, publishes its name through the primary with the external
// update key, which every pod then answers.
func TestExternalSecrets(t *testing.T) {
	ctx := context.Background()
	coreDNS(t, ctx) // the secondaries find the primary by its cluster DNS name
	for _, tool := range []string{"sops", "age-keygen", "external-dns", "kubectl"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			t.Fatalf("bin/%s is missing (make tools): %v", tool, err)
		}
	}
	imgs := pushedImages(t)
	block := docBlock(t, filepath.Join("docs", "security.md"), sopsMarker)
	t0 := time.Now()

	// Namespace dns, as the recipe names it: from none (TestRenderedCluster's
	// and the README's runs of the example live there).
	freshNamespace(t, ctx, "dns")
	apply(t, ctx, fixture.Load(t, "namespace-restricted.yaml", map[string]string{"NAME": "dns"})+hostPathPVs(t, "ext-pv-", 3))

	// The recipe, in a directory beside the package.
	work := t.TempDir()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cp.Kubeconfig, "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docs/security.md's SOPS recipe failed: %v\n%s", err, out)
	}
	t.Logf("docs/security.md's SOPS recipe ran in %.1f s:\n%s", time.Since(t0).Seconds(), out)
	made := sopsSecrets(t, work)

	// The package: secrets external, the DNSKEY dnssec-keygen made, the
	// images pinned by digest.
	pub := dnskeyLines(t, filepath.Join(work, "keys"))
	pkg := examplePackage(t, filepath.Join(work, "my-dns"))
	var ext strings.Builder
	ext.WriteString("  secrets: external\n  dnssec:\n    publicKeys:\n")
	for _, l := range pub {
		fmt.Fprintf(&ext, "      - %q\n", l)
	}
	editFile(t, filepath.Join(pkg, "cluster.yaml"), "  mode: authoritative\n", "  mode: authoritative\n"+ext.String())
	editFile(t, filepath.Join(pkg, "cluster.yaml"), "  image: "+imgs.bindTag+"\n", "  image: "+imgs.bind+"\n  agent:\n    image: "+imgs.agent+"\n")
	results := filepath.Join(work, "results")
	renderWithResults(t, pkg, results)

	// The info results name every Secret the recipe made, and no other.
	named := expectedSecrets(t, filepath.Join(results, "results.yaml"))
	if diff := cmp.Diff(slices.Sorted(maps.Keys(made)), named); diff != "" {
		t.Errorf("the Secrets the render's info results name (+) against the ones the recipe made (-):\n%s", diff)
	}
	// No key material in the package; the same check finds the default
	// mode's.
	if found := keyMaterial(t, filepath.Join(pkg, "rendered"), made); len(found) > 0 {
		t.Fatalf("spec.secrets external: the rendered package holds key material:\n%s", strings.Join(found, "\n"))
	}
	def := examplePackage(t, filepath.Join(t.TempDir(), "default"))
	renderWithResults(t, def, filepath.Join(t.TempDir(), "results"))
	if found := keyMaterial(t, filepath.Join(def, "rendered"), nil); len(found) == 0 {
		t.Errorf("the key material check finds nothing in the default mode's render, which holds Secrets")
	}

	kubectl(t, "apply", "--server-side", "-R", "-f", filepath.Join(pkg, "rendered"))
	pods := waitPodsReady(t, ctx, "dns", "app.kubernetes.io/instance=auth", 3, controlplane.Hang)
	t.Logf("3 BIND pods Ready on the external Secrets in %.1f s", time.Since(t0).Seconds())

	// each asks every pod until it answers want: the sorted lines of dig
	// +short, each passed through norm when one is given.
	each := func(t *testing.T, want string, norm func(string) string, args ...string) {
		t.Helper()
		for _, p := range pods {
			deadline := time.Now().Add(controlplane.Hang)
			for {
				got, _ := dig(append([]string{"@" + p.Status.PodIP}, args...)...)
				lines := strings.Split(got, "\n")
				for i := range lines {
					if norm != nil {
						lines[i] = norm(lines[i])
					}
				}
				sort.Strings(lines)
				if got = strings.Join(lines, "\n"); got == want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s (%s): dig %s answers %q, want %q", p.Name, p.Status.PodIP, strings.Join(args, " "), got, want)
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	}
	secret := func(name string) string {
		t.Helper()
		s, err := cs.CoreV1().Secrets("dns").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(s.Data["secret"]))
	}

	t.Run("ServesBothViews", func(t *testing.T) {
		each(t, "198.51.100.10\nexample.com.", nil, "www.example.com", "A")
		// The internal view, chosen by its key: the secondaries transferred
		// it with the internal transfer key.
		each(t, "192.0.2.20", nil, "-y", "hmac-sha256:internal-client:"+secret("internal-client-tsig"), "intranet.example.com", "A")
		// Every secondary holds the primary's serial.
		i := slices.IndexFunc(pods, func(p corev1.Pod) bool { return p.Name == "auth-0" })
		if i < 0 {
			t.Fatal("no pod auth-0")
		}
		soa, err := dig("@"+pods[i].Status.PodIP, "example.com", "SOA")
		if f := strings.Fields(soa); err != nil || len(f) != 7 {
			t.Fatalf("auth-0: SOA %q %v", soa, err)
		}
		each(t, soa, nil, "example.com", "SOA")
		t.Logf("every pod serves both views of example.com (SOA %s)", soa)
	})

	t.Run("SignedWithTheMadeKey", func(t *testing.T) {
		// A DNSKEY's rdata, its base64 key in one piece (dig and
		// dnssec-keygen split it at different widths).
		rdata := func(s string) string {
			f := strings.Fields(s)
			if len(f) < 4 {
				return s
			}
			return strings.Join(f[:3], " ") + " " + strings.Join(f[3:], "")
		}
		var want []string
		for _, l := range pub {
			_, after, _ := strings.Cut(l, " DNSKEY ")
			want = append(want, rdata(after))
		}
		sort.Strings(want)
		each(t, strings.Join(want, "\n"), rdata, "secure.example.com", "DNSKEY")
		t.Logf("every pod serves secure.example.com signed with the key dnssec-keygen made: %v", want)
	})

	t.Run("ExternalDNS", func(t *testing.T) {
		t0 := time.Now()
		// external-dns reads its annotations under external-dns.kubernetes.io/
		// (since v0.22.0; the legacy external-dns.alpha.kubernetes.io/ only
		// with --enable-legacy-annotation-prefix).
		svc, err := cs.CoreV1().Services("dns").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"external-dns.kubernetes.io/hostname": "web.apps.example.com"}},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		primary, err := cs.CoreV1().Services("dns").Get(ctx, "auth-primary", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The key as the in-cluster external-dns reads it: from the Secret
		// the recipe applied.
		ed := exec.Command(filepath.Join(bin, "external-dns"), "--once",
			"--kubeconfig="+cp.Kubeconfig, "--source=service", "--namespace=dns", "--publish-internal-services",
			"--provider=rfc2136", "--registry=txt", "--txt-owner-id="+edOwnerID, "--policy=upsert-only",
			"--domain-filter=apps.example.com",
			"--rfc2136-host="+primary.Spec.ClusterIP, "--rfc2136-port=53", "--rfc2136-zone=apps.example.com",
			"--rfc2136-tsig-keyname=externaldns-key", "--rfc2136-tsig-secret="+secret("externaldns-key-tsig"),
			"--rfc2136-tsig-secret-alg=hmac-sha256", "--rfc2136-tsig-axfr",
			"--metrics-address=127.0.0.1:0", "--log-level=debug")
		out, err := ed.CombinedOutput()
		if err != nil {
			t.Fatalf("external-dns: %v\n%s", err, tail(string(out), 40))
		}
		t.Logf("external-dns --once exited 0:\n%s", tail(string(out), 40))
		// It exits 0 too when it finds no endpoint, or when the primary
		// refuses the update (logged, not returned).
		for _, want := range []string{`msg="Adding RR: web.apps.example.com `, `msg=SendMessage.success`} {
			if !strings.Contains(string(out), want) {
				t.Fatalf("external-dns's output has no %s: it sent no accepted update adding web.apps.example.com", want)
			}
		}
		t.Cleanup(func() {
			if !t.Failed() {
				return
			}
			// What the primary holds and says, for the failure above.
			for _, p := range pods {
				soa, _ := dig("@"+p.Status.PodIP, "apps.example.com", "SOA")
				key, _ := dig("@"+p.Status.PodIP, "-y", "hmac-sha256:externaldns-key:"+secret("externaldns-key-tsig"), "web.apps.example.com", "A")
				t.Logf("%s: apps.example.com SOA %q; web.apps.example.com A with externaldns-key %q", p.Name, soa, key)
			}
			logs, _ := exec.Command(filepath.Join(bin, "kubectl"), "--kubeconfig", cp.Kubeconfig, "-n", "dns", "logs", "auth-0", "--tail=80").CombinedOutput()
			t.Logf("auth-0's log:\n%s", logs)
		})
		each(t, svc.Spec.ClusterIP, nil, "web.apps.example.com", "A")
		t.Logf("external-dns published web.apps.example.com = %s (the Service's ClusterIP) through %s with the external update key; every pod answers it, %.1f s", svc.Spec.ClusterIP, primary.Spec.ClusterIP, time.Since(t0).Seconds())
	})
}

// docBlock returns the first ```sh block after marker in file (relative to
// the repository's root).
func docBlock(t *testing.T, file, marker string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("%s has no %q block", file, marker)
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(s[i:])
	if m == nil {
		t.Fatalf("%s: no ```sh block after %q", file, marker)
	}
	return m[1]
}

// freshNamespace deletes namespace ns and waits until it is gone.
func freshNamespace(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	deadline := time.Now().Add(controlplane.Hang)
	for {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s still there after %s: %v", ns, controlplane.Hang, err)
		}
		time.Sleep(time.Second)
	}
}

// sopsSecrets reads the recipe's encrypted Secrets (dir/secrets/*.yaml):
// each must hold its values as sops ciphertext only, and open with the age
// key and not without it. It returns each Secret's data.
func sopsSecrets(t *testing.T, dir string) map[string]map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "secrets", "*.yaml"))
	if len(files) == 0 {
		t.Fatalf("the recipe wrote no %s", filepath.Join(dir, "secrets", "*.yaml"))
	}
	sops := func(keyFile, file string) ([]byte, error) {
		cmd := exec.Command(filepath.Join(bin, "sops"), "--decrypt", file)
		// HOME: no default age key (~/.config/sops/age/keys.txt) either.
		cmd.Env = append(os.Environ(), "SOPS_AGE_KEY_FILE="+keyFile, "HOME="+dir)
		return cmd.Output()
	}
	out := map[string]map[string][]byte{}
	for _, f := range files {
		enc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sops(filepath.Join(dir, "no-such-key"), f); err == nil {
			t.Errorf("%s: sops decrypts it without the age key", f)
		}
		dec, err := sops(filepath.Join(dir, "age.key"), f)
		if err != nil {
			t.Fatalf("sops --decrypt %s: %v", f, err)
		}
		var s corev1.Secret
		if err := yaml.Unmarshal(dec, &s); err != nil {
			t.Fatalf("%s decrypted: %v", f, err)
		}
		if len(s.Data) == 0 || s.Namespace != "dns" {
			t.Fatalf("%s decrypted is no Secret of namespace dns with data:\n%s", f, dec)
		}
		// Every value of data is sops ciphertext, and no material is in
		// the file in any form.
		var encrypted struct {
			Data map[string]string `json:"data"`
		}
		if err := yaml.Unmarshal(enc, &encrypted); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for k, v := range s.Data {
			if e := encrypted.Data[k]; !strings.HasPrefix(e, "ENC[AES256_GCM,") {
				t.Errorf("%s: data key %s is not encrypted: %.20q", f, k, e)
			}
			if k == "algorithm" || k == "keyName" {
				continue
			}
			for _, form := range []string{strings.TrimSpace(string(v)), base64.StdEncoding.EncodeToString(v)} {
				if strings.Contains(string(enc), form) {
					t.Errorf("%s holds %s in clear", f, k)
				}
			}
		}
		out[s.Name] = s.Data
	}
	return out
}

// dnskeyLines are the DNSKEY records of dnssec-keygen's .key files in dir.
func dnskeyLines(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "K*.key"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, " DNSKEY ") && !strings.HasPrefix(l, ";") {
				out = append(out, strings.TrimSpace(l))
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no DNSKEY in %s", dir)
	}
	return out
}

// examplePackage copies examples/authoritative to dir, its Kptfile running
// the built functions, and returns dir.
func examplePackage(t *testing.T, dir string) string {
	t.Helper()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "examples", "authoritative"))); err != nil {
		t.Fatal(err)
	}
	editFile(t, filepath.Join(dir, "Kptfile"), "- image: git.unkin.net/unkin/bind-fn/fn-validate:v0.1.0", "- exec: "+filepath.Join(bin, "fn-validate"))
	editFile(t, filepath.Join(dir, "Kptfile"), "- image: git.unkin.net/unkin/bind-fn/fn-render:v0.1.0", "- exec: "+filepath.Join(bin, "fn-render"))
	return dir
}

// editFile replaces from with to in file, which must hold from.
func editFile(t *testing.T, file, from, to string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), from, to, 1)
	if s == string(b) {
		t.Fatalf("%s: %q not found", file, from)
	}
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// renderWithResults runs kpt fn render on pkg, writing the functions'
// results to dir/results.yaml.
func renderWithResults(t *testing.T, pkg, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	render := exec.Command(filepath.Join(bin, "kpt"), "fn", "render", "--allow-exec", "--results-dir", dir, pkg)
	render.Dir = filepath.Dir(pkg)
	if out, err := render.CombinedOutput(); err != nil {
		t.Fatalf("kpt fn render: %v\n%s", err, out)
	}
}

// expectedSecrets are the Secrets the render's info results (kpt's
// results file) say the pods wait for, sorted.
func expectedSecrets(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rl struct {
		Items []struct {
			Results []struct {
				Message  string `json:"message"`
				Severity string `json:"severity"`
			} `json:"results"`
		} `json:"items"`
	}
	if err := yaml.Unmarshal(b, &rl); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	re := regexp.MustCompile(`waits? for Secret "([^"]+)" in namespace "dns", made elsewhere`)
	seen := map[string]bool{}
	for _, it := range rl.Items {
		for _, r := range it.Results {
			if m := re.FindStringSubmatch(r.Message); m != nil && r.Severity == "info" {
				seen[m[1]] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// keyMaterial lists what in the rendered files under dir is key material:
// a Secret object, a key statement, a private key, or any value of made.
func keyMaterial(t *testing.T, dir string, made map[string]map[string][]byte) []string {
	t.Helper()
	markers := []string{"kind: Secret", `secret "`, "PrivateKey:"}
	for _, data := range made {
		for k, v := range data {
			switch {
			case k == "secret": // a TSIG key's material
				markers = append(markers, strings.TrimSpace(string(v)))
			case strings.HasSuffix(k, ".private"): // a DNSSEC private key file
				for _, l := range strings.Split(string(v), "\n") {
					if _, key, ok := strings.Cut(l, "PrivateKey: "); ok {
						markers = append(markers, strings.TrimSpace(key))
					}
				}
			}
		}
	}
	var found []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range markers {
			if strings.Contains(string(b), m) {
				found = append(found, fmt.Sprintf("%s: %.40q", p, m))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
