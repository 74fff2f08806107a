package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestOwners(t *testing.T) {
	cases := map[string]struct {
		reason  string
		paths   []string
		want    []Package
		wantErr string
	}{
		"Owned": {
			reason: "each file names its package once, sorted; a Multi-Arch .list (name:arch) is the same package",
			paths: []string{"/usr/sbin/rndc", "/usr/lib/x86_64-linux-gnu/libuv.so.1.0.0", "/usr/sbin/named",
				"/usr/lib/x86_64-linux-gnu/libc.so.6"},
			want: []Package{
				{Name: "bind9", Version: "1:9.20.30-1~deb13u1", Arch: "amd64"},
				{Name: "libc6", Version: "2.41-12", Arch: "amd64"},
				{Name: "libuv1t64", Version: "1.50.0-2", Arch: "amd64"},
			},
		},
		"Unowned": {
			reason:  "a file of the image no package owns would be missing from the SBOM",
			paths:   []string{"/usr/sbin/named", "/etc/ld.so.cache"},
			wantErr: "cannot name the package of /etc/ld.so.cache",
		},
		"NotInstalled": {
			reason:  "a package dpkg lists as removed is not what the root holds",
			paths:   []string{"/etc/removed.conf"},
			wantErr: "cannot name the version of removed",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Owners(filepath.Join("testdata", "dpkg"), tc.paths)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("%s\nOwners error = %v, want one containing %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nOwners (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestMergeDeterministic: two architectures' SBOMs merge into one whose
// bytes depend only on the inputs, every package once.
func TestMergeDeterministic(t *testing.T) {
	dir := t.TempDir()
	amd := New("example.org/bind9", "9.20", time.Unix(0, 0), []Package{{"bind9", "1:9.20", "amd64"}, {"libc6", "2.41", "amd64"}})
	arm := New("example.org/bind9", "9.20", time.Unix(0, 0), []Package{{"libc6", "2.41", "arm64"}, {"bind9", "1:9.20", "arm64"}})
	var files []string
	for n, b := range map[string]BOM{"amd64": amd, "arm64": arm} {
		f := filepath.Join(dir, n+".json")
		if err := writeJSON(f, b); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	var outs []string
	for _, order := range [][]string{files, {files[1], files[0]}} {
		out := filepath.Join(dir, "merged.json")
		if err := run(append([]string{"-merge", "-o", out}, order...), nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(b))
	}
	if outs[0] != outs[1] {
		t.Errorf("merged SBOM depends on the order of its inputs:\n%s\n---\n%s", outs[0], outs[1])
	}
	for _, want := range []string{
		`"purl": "pkg:deb/debian/bind9@1%3A9.20?arch=amd64&distro=debian-13"`,
		`"purl": "pkg:deb/debian/bind9@1%3A9.20?arch=arm64&distro=debian-13"`,
		`"timestamp": "1970-01-01T00:00:00Z"`,
	} {
		if !strings.Contains(outs[0], want) {
			t.Errorf("merged SBOM lacks %s:\n%s", want, outs[0])
		}
	}
	if n := strings.Count(outs[0], `"type": "library"`); n != 4 {
		t.Errorf("merged SBOM holds %d packages, want 4", n)
	}
}
