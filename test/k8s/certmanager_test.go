package k8s

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/test/k8s/controlplane"
)

// certManagerVersion is the cert-manager whose controller hack/install-tools.sh
// builds (tools/cert-manager): the newest whose cmd/controller the module
// proxy serves.
const certManagerVersion = "v1.11.5"

// certManagerCRDs are cert-manager's CRDs from its module, the Helm
// template labels dropped.
func certManagerCRDs(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/cert-manager/cert-manager@"+certManagerVersion)
	cmd.Dir = filepath.Join(env.root, "tools", "cert-manager")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download cert-manager: %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download cert-manager: %v %s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(mod.Dir, "deploy", "crds", "crd-*.yaml"))
	if len(files) == 0 {
		t.Fatalf("no CRDs in %s/deploy/crds", mod.Dir)
	}
	objs := readObjects(t, files...)
	for _, o := range objs {
		o.SetLabels(nil)
	}
	return objs
}

// renderTLSPackage runs bin/fn-render on a BindCluster with
// spec.tls.certificate and returns the rendered Certificate.
func renderTLSPackage(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	rl := fmt.Sprintf(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: bind.unkin.net/v1alpha1
  kind: BindCluster
  metadata: {name: dns, namespace: %[1]s}
  spec:
    replicas: 2
    tls:
      secretName: dns-tls
      dot: {}
      doh: {}
      certificate:
        issuerRef: {name: selfsigned}
        duration: 1h
        renewBefore: 59m50s
- apiVersion: bind.unkin.net/v1alpha1
  kind: BindZone
  metadata: {name: example-com, namespace: %[1]s}
  spec:
    clusterRef: dns
    zoneName: example.com
    nameservers: [ns1.example.net.]
`, ns)
	cmd := exec.Command(filepath.Join(env.bin, "fn-render"))
	cmd.Stdin = strings.NewReader(rl)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fn-render: %v\n%s", err, stderr.String())
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(out, &list); err != nil {
		t.Fatal(err)
	}
	for _, it := range list.Items {
		if it["kind"] == "Certificate" {
			return &unstructured.Unstructured{Object: it}
		}
	}
	t.Fatalf("fn-render rendered no Certificate:\n%s", out)
	return nil
}

// TestCertManagerIssues: real cert-manager (its controller v1.11.5, run
// outside the cluster against this control plane) issues the Certificate
// bind-fn renders for spec.tls.certificate from a self-signed Issuer into
// the Secret the pods mount, in the format the agent checks (tls.crt with
// the Services' names, its tls.key, ca.crt), and renews it, with a new
// key, at least twice in a row (duration 1h, renewBefore 59m50s).
func TestCertManagerIssues(t *testing.T) {
	bin := filepath.Join(env.bin, "cert-manager")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("bin/cert-manager is missing: run 'bash hack/install-tools.sh cert-manager' (%v)", err)
	}
	ctx := context.Background()
	const ns = "tlscm"
	namespace(t, ctx, ns)
	mustApply(t, ctx, certManagerCRDs(t)...)
	for _, c := range []string{"certificates", "certificaterequests", "issuers", "clusterissuers", "orders", "challenges"} {
		name := c + "." + map[bool]string{true: "acme.", false: ""}[c == "orders" || c == "challenges"] + "cert-manager.io"
		eventually(t, controlplane.Hang, "CRD "+name+" Established", func() error {
			got, err := get(ctx, gvkCRD, "", name)
			if err != nil {
				return err
			}
			return condition(got, "Established", "True")
		})
	}
	env.mapper.Reset()
	dir := filepath.Join(env.dir, "cert-manager")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cm, err := controlplane.StartProcessEnv(dir, "cert-manager", []string{"KUBECONFIG=" + env.cp.Kubeconfig}, bin,
		"--kubeconfig="+env.cp.Kubeconfig, "--namespace="+ns, "--cluster-resource-namespace="+ns,
		"--leader-elect=false", "--metrics-listen-address=127.0.0.1:19402", "--enable-certificate-owner-ref")
	if err != nil {
		t.Fatal(err)
	}
	env.cp.Add(cm)
	mustApply(t, ctx, obj(t, fmt.Sprintf("apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: selfsigned, namespace: %s}\nspec: {selfSigned: {}}\n", ns)))
	cert := renderTLSPackage(t, ns)
	mustApply(t, ctx, cert)

	seen := map[string]bool{}
	var order []string
	eventually(t, 5*time.Minute, "three certificates issued into Secret dns-tls", func() error {
		if cm.Exited() {
			t.Fatalf("cert-manager exited: %s", cm.Tail(40))
		}
		s, err := get(ctx, gvkSecret, ns, "dns-tls")
		if err != nil {
			return err
		}
		serial, err := checkIssued(s)
		if err != nil {
			return err
		}
		if !seen[serial] {
			seen[serial] = true
			order = append(order, serial)
			t.Logf("Secret dns-tls holds certificate serial %s", serial)
		}
		if len(order) < 3 {
			return fmt.Errorf("%d certificates seen", len(order))
		}
		return nil
	})
	t.Logf("cert-manager %s issued and renewed twice: serials %v", certManagerVersion, order)
}

// checkIssued checks a Secret as the agent does (internal/agent CheckTLS):
// the pair belongs together, is valid now, chains to ca.crt, and names the
// Services; it returns the certificate's serial.
func checkIssued(s *unstructured.Unstructured) (string, error) {
	data, _, _ := unstructured.NestedStringMap(s.Object, "data")
	dec := func(k string) []byte {
		var b []byte
		_ = json.Unmarshal([]byte(`"`+data[k]+`"`), &b)
		return b
	}
	crt, key, ca := dec("tls.crt"), dec("tls.key"), dec("ca.crt")
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return "", fmt.Errorf("tls.crt and tls.key: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return "", err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return "", fmt.Errorf("no ca.crt")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "dns.tlscm.svc.cluster.local", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return "", fmt.Errorf("verify: %v", err)
	}
	if err := leaf.VerifyHostname("dns-primary.tlscm.svc.cluster.local"); err != nil {
		return "", err
	}
	return leaf.SerialNumber.Text(16), nil
}
