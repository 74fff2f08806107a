package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKptPipeline(t *testing.T) {
	cases := map[string]struct {
		reason               string
		kptfile              string // "" writes no Kptfile
		mutators, validators []string
		wantErr              string
	}{
		"NoKptfile": {
			reason:   "a plain directory of objects renders, then validates",
			mutators: []string{"fn-render"}, validators: []string{"fn-validate"},
		},
		"Images": {
			reason:   "the examples' Kptfile: the published images, by base name without tag",
			kptfile:  "pipeline:\n  validators:\n    - image: git.unkin.net/unkin/bind-fn/fn-validate:v0.1.0\n  mutators:\n    - image: git.unkin.net/unkin/bind-fn/fn-render:v0.1.0\n",
			mutators: []string{"fn-render"}, validators: []string{"fn-validate"},
		},
		"Exec": {
			reason:   "the Kptfile make test writes: exec entries with local paths",
			kptfile:  "pipeline:\n  mutators:\n    - exec: /abs/bin/fn-render\n",
			mutators: []string{"fn-render"},
		},
		"EmptyPipeline": {
			reason:  "no pipeline: nothing runs (kpt rewrites the files only)",
			kptfile: "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: x}\n",
		},
		"OtherFunction": {
			reason:  "a function bind-fn does not have is kpt's to run",
			kptfile: "pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-namespace:v0.4\n",
			wantErr: `Kptfile: pipeline.mutators[0]: "gcr.io/kpt-fn/set-namespace:v0.4" is not one of bind-fn's functions`,
		},
		"FunctionConfig": {
			reason:  "a functionConfig is not taken",
			kptfile: "pipeline:\n  validators:\n    - image: fn-validate\n      configPath: fn.yaml\n",
			wantErr: "Kptfile: pipeline.validators[0]: bind-fn render takes no functionConfig",
		},
		"NoFunction": {
			reason:  "an entry with neither image nor exec",
			kptfile: "pipeline:\n  mutators:\n    - name: x\n",
			wantErr: `pipeline.mutators[0]: "" is not one of bind-fn's functions`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.kptfile != "" {
				if err := os.WriteFile(filepath.Join(dir, kptfileName), []byte(tc.kptfile), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m, v, err := kptPipeline(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: err = %v, want it to contain %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if d := cmp.Diff([][]string{tc.mutators, tc.validators}, [][]string{m, v}); d != "" {
				t.Errorf("%s: (-want +got):\n%s", tc.reason, d)
			}
		})
	}
}

func TestRenderRefusesSubpackage(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{kptfileName, filepath.Join("sub", kptfileName)} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: x}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, err := (&RenderCmd{Dir: dir}).Run(os.Stderr)
	if code != 1 || err == nil || !strings.Contains(err.Error(), filepath.Join("sub", kptfileName)+": a subpackage") {
		t.Errorf("render of a package with a subpackage: %d, %v; want exit 1 naming sub/Kptfile", code, err)
	}
}
