package bindtools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
)

const prometheusHint = "install Debian's prometheus package with `make tools` (or: apt-get install -y --no-install-recommends prometheus; " +
	"the package's service need not run), or set " + EnvSkipCLI + "=1 to skip tests that need it"

// Prometheus returns the absolute path of Debian's prometheus or promtool
// (name). It fails the test when the program is missing (it skips instead
// when BINDFN_SKIP_CLI=1).
func Prometheus(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if skipping(EnvSkipCLI) {
		t.Skipf("%s=1 and %s is missing", EnvSkipCLI, name)
	}
	t.Fatalf("this test needs %s (Debian's prometheus package), which is missing: %s", name, prometheusHint)
	return ""
}

// Prom is a Prometheus a test started (StartPrometheus), on loopback.
type Prom struct {
	// Base is its HTTP address, http://127.0.0.1:port.
	Base string
}

// StartPrometheus runs Debian's prometheus (bin) with config (its
// prometheus.yml; the file names it gives are the test's) on a free
// loopback port, keeping its data and log in dir; port is the one it
// listens on, which config may scrape. The process is killed when the test
// ends; its log is shown when the test failed.
func StartPrometheus(t testing.TB, bin, dir string, port int, config string) *Prom {
	t.Helper()
	conf := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("--- prometheus log ---\n%s", b)
		}
	})
	return &Prom{Base: "http://" + addr}
}

// PromSample is one series of an instant query's result.
type PromSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// Query runs an instant query through the HTTP API (bounded by Hang).
func (p *Prom) Query(expr string) ([]PromSample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Hang)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.Base+"/api/v1/query?query="+url.QueryEscape(expr), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []PromSample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d: %v: %s", expr, resp.StatusCode, err, b)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", expr, r.Error)
	}
	return r.Data.Result, nil
}

// Series returns the label sets of expr's result, sorted; it fails the test
// on a query error.
func (p *Prom) Series(t testing.TB, expr string) []map[string]string {
	t.Helper()
	res, err := p.Query(expr)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, s := range res {
		out = append(out, s.Metric)
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

// Value is expr's first value (0 when the result is empty).
func (p *Prom) Value(t testing.TB, expr string) float64 {
	t.Helper()
	res, err := p.Query(expr)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 {
		return 0
	}
	s, _ := res[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s: value %v", expr, res[0].Value)
	}
	return v
}
