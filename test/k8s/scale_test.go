package k8s

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// scaleZones is the size of TestScaleApply: 2,000 zones in make k8s-test,
// BINDFN_K8S_SCALE_ZONES=100000 for the hoster's cluster of issue #35
// (BENCHMARKS.md has the command and the figures).
func scaleZones(t *testing.T) int {
	n := 2000
	if s := os.Getenv("BINDFN_K8S_SCALE_ZONES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("BINDFN_K8S_SCALE_ZONES=%q: want a number of zones", s)
		}
	}
	return n
}

// TestScaleApply renders a generated cluster of many zones with bin/fn-render
// (10 records a zone, two views, every tenth zone dynamic: hack/bench-scale.sh's
// package) and server-side applies every rendered object to the real
// kube-apiserver: none is rejected (etcd's request limit, the API server's
// body limit, the ConfigMap size check), none draws a warning, and a zones
// ConfigMap reads back with the data that was sent. It logs the objects, the
// bytes sent and stored and the apply time.
func TestScaleApply(t *testing.T) {
	zones := scaleZones(t)
	ctx := context.Background()
	dir := t.TempDir()
	gen := filepath.Join(dir, "bind-fn-gen")
	build := exec.Command("go", "build", "-o", gen, "./hack/bind-fn-gen")
	build.Dir = env.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./hack/bind-fn-gen: %v\n%s", err, out)
	}
	in := filepath.Join(dir, "rl.yaml")
	runTo(t, "", in, gen, "-zones", strconv.Itoa(zones), "-records", strconv.Itoa(10*zones), "-seed", "1", "-views", "2", "-dynamic", "10", "-namespace", "scale")
	out := filepath.Join(dir, "out.yaml")
	t0 := time.Now()
	runTo(t, in, out, filepath.Join(env.bin, "fn-render"))
	t.Logf("fn-render: %d zones rendered in %.1f s", zones, time.Since(t0).Seconds())
	_ = os.Remove(in)

	namespace(t, ctx, "scale")
	var applied []*unstructured.Unstructured
	t.Cleanup(func() {
		for _, o := range applied {
			if r, err := resource(o); err == nil {
				_ = r.Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			}
		}
	})
	var sent, stored, largest int
	var largestID string
	shards := 0
	var sample *unstructured.Unstructured
	t0 = time.Now()
	err := renderedItems(out, func(o *unstructured.Unstructured, js []byte) {
		got, warn, err := apply(ctx, o, false)
		if err != nil {
			t.Fatalf("apply %s (%d bytes): %v", id(o), len(js), err)
		}
		if len(warn) > 0 {
			t.Errorf("apply %s: warnings %q", id(o), warn)
		}
		applied = append(applied, &unstructured.Unstructured{Object: map[string]any{"apiVersion": o.GetAPIVersion(), "kind": o.GetKind(), "metadata": map[string]any{"name": o.GetName(), "namespace": o.GetNamespace()}}})
		b, err := json.Marshal(got.Object)
		if err != nil {
			t.Fatal(err)
		}
		sent += len(js)
		stored += len(b)
		if len(b) > largest {
			largest, largestID = len(b), id(o)
		}
		if o.GetKind() == "ConfigMap" && strings.Contains(o.GetName(), "-zones-") {
			shards++
			if sample == nil {
				sample = o
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	if shards < zones/250 {
		t.Fatalf("%d zones ConfigMaps applied for %d zones: the render did not shard (or the output was not read)", shards, zones)
	}
	if sample == nil {
		t.Fatal("no zones ConfigMap in the output")
	}
	got, err := get(ctx, gvkConfigMap, sample.GetNamespace(), sample.GetName())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sample.Object["data"], got.Object["data"]); diff != "" {
		t.Errorf("%s reads back with other data (-sent +stored):\n%s", id(sample), diff)
	}
	t.Logf("%d zones: %d rendered objects (%d zones ConfigMaps) server-side applied in %.1f s; %.1f MiB sent as JSON, %.1f MiB stored as the API server returns them (managedFields included), largest %s %d KiB",
		zones, len(applied), shards, took.Seconds(), float64(sent)/(1<<20), float64(stored)/(1<<20), largestID, largest>>10)
}

// runTo runs a command with stdin from the file in ("" for none) and stdout
// into the file out.
func runTo(t *testing.T, in, out string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	if in != "" {
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(name), err, stderr.Bytes())
	}
}

// renderedItems calls f with every rendered object of the ResourceList
// fn-render wrote to file (the inputs, local-config, are skipped), one at a
// time: the output of 100,000 zones is 370 MiB, too much to decode whole
// here. fn-render writes items as "- " then lines indented by two.
func renderedItems(file string, f func(o *unstructured.Unstructured, js []byte)) error {
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var doc bytes.Buffer
	inItems := false
	flush := func() error {
		if doc.Len() == 0 {
			return nil
		}
		js, err := yaml.YAMLToJSON(doc.Bytes())
		doc.Reset()
		if err != nil {
			return err
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(js); err != nil {
			return err
		}
		if o.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
			return nil
		}
		for _, a := range []string{"config.kubernetes.io/path", "internal.config.kubernetes.io/path"} {
			unstructured.RemoveNestedField(o.Object, "metadata", "annotations", a)
		}
		if len(o.GetAnnotations()) == 0 {
			unstructured.RemoveNestedField(o.Object, "metadata", "annotations")
		}
		f(o, js)
		return nil
	}
	for sc.Scan() {
		l := sc.Bytes()
		switch {
		case bytes.Equal(l, []byte("items:")):
			inItems = true
			continue
		case !inItems:
			continue
		case bytes.HasPrefix(l, []byte("- ")):
			if err := flush(); err != nil {
				return err
			}
			l = l[2:]
		case bytes.HasPrefix(l, []byte("  ")):
			l = l[2:]
		case len(l) == 0:
		default:
			inItems = false // functionConfig, results
			if err := flush(); err != nil {
				return err
			}
			continue
		}
		doc.Write(l)
		doc.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return flush()
}
