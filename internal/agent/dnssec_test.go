package agent

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/dnssec"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

func TestInstallDNSSECKeys(t *testing.T) {
	secret := map[string][]byte{}
	var bases []string
	r := &testutil.DetRand{}
	for _, role := range []string{dnssec.RoleKSK, dnssec.RoleZSK} {
		k, err := dnssec.Generate(r, "example.com.", dnssec.Spec{Role: role, Algorithm: dns.ECDSAP256SHA256})
		if err != nil {
			t.Fatal(err)
		}
		for n, b := range k.Files() {
			secret[n] = b
		}
		bases = append(bases, k.Base())
	}
	sort.Strings(bases)
	root := t.TempDir()
	src, keyDir := filepath.Join(root, "dnssec"), filepath.Join(root, "data", "primary")
	testutil.WriteKubeletDir(t, src, secret)
	if err := os.MkdirAll(keyDir, 0o755); err != nil {
		t.Fatal(err)
	}

	got, err := InstallDNSSECKeys(src, keyDir, []string{"example.com"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if diff := cmp.Diff(bases, got); diff != "" {
		t.Errorf("installed keys (-want +got):\n%s", diff)
	}
	for _, b := range bases {
		for _, suf := range []string{".key", ".private", ".state"} {
			if _, err := os.Stat(filepath.Join(keyDir, b+suf)); err != nil {
				t.Errorf("BIND's file %s%s missing: %v", b, suf, err)
			}
		}
	}

	// named owns installed files: a second install (a restart with the
	// volume kept) changes nothing, even where named rewrote a file.
	state := filepath.Join(keyDir, bases[0]+".state")
	testutil.WriteFile(t, state, []byte("; rewritten by named\n"))
	got, err = InstallDNSSECKeys(src, keyDir, []string{"example.com"}, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("second install: installed %v, err %v; want nothing", got, err)
	}
	if b, _ := os.ReadFile(state); string(b) != "; rewritten by named\n" {
		t.Errorf("the agent overwrote a key file named owns")
	}

	// A signed zone without keys in the mount waits (named would make its own).
	_, err = InstallDNSSECKeys(src, keyDir, []string{"example.com", "new.example"}, nil)
	if err == nil || !strings.Contains(err.Error(), `no DNSSEC key for signed zone "new.example"`) {
		t.Errorf("missing keys for a signed zone: want an error, got %v", err)
	}
	// No mount, no signed zone: nothing to do.
	if got, err := InstallDNSSECKeys(filepath.Join(root, "absent"), keyDir, nil, nil); err != nil || len(got) != 0 {
		t.Errorf("absent mount: %v, %v", got, err)
	}
}

// TestInstallImportedKeys: keys imported without .state files (a Secret a
// user filled from dnssec-keygen) get one, with the role BIND would give.
func TestInstallImportedKeys(t *testing.T) {
	r := &testutil.DetRand{}
	secret := map[string][]byte{}
	roles := map[string]string{}
	for _, s := range []struct{ zone, role string }{{"a.example.", dnssec.RoleKSK}, {"a.example.", dnssec.RoleZSK}, {"b.example.", dnssec.RoleCSK}} {
		k, err := dnssec.Generate(r, s.zone, dnssec.Spec{Role: s.role, Algorithm: dns.ECDSAP256SHA256})
		if err != nil {
			t.Fatal(err)
		}
		secret["my-"+k.SecretKey(".key")] = k.KeyFile()
		secret["my-"+k.SecretKey(".private")] = k.PrivateFile()
		roles[k.Base()] = s.role
	}
	root := t.TempDir()
	src, keyDir := filepath.Join(root, "dnssec"), filepath.Join(root, "primary")
	testutil.WriteKubeletDir(t, src, secret)
	if _, err := InstallDNSSECKeys(src, keyDir, []string{"a.example", "b.example"}, nil); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for base := range roles {
		b, err := os.ReadFile(filepath.Join(keyDir, base+".state"))
		if err != nil {
			t.Fatal(err)
		}
		ksk, zsk := strings.Contains(string(b), "KSK: yes"), strings.Contains(string(b), "ZSK: yes")
		got[base] = map[[2]bool]string{{true, false}: "ksk", {false, true}: "zsk", {true, true}: "csk"}[[2]bool{ksk, zsk}]
	}
	if diff := cmp.Diff(roles, got); diff != "" {
		t.Errorf("roles in the written .state files (-want +got):\n%s", diff)
	}
}

// TestSeedZoneRefresh: an inline-signed zone's raw file follows the render;
// a dynamic zone's seed is never overwritten (named owns it).
func TestSeedZoneRefresh(t *testing.T) {
	dir := t.TempDir()
	src, dest := filepath.Join(dir, "src"), filepath.Join(dir, "data", "db")
	for _, tc := range []struct {
		name    string
		refresh bool
		want    string
	}{
		{"inline-signed", true, "v2"},
		{"dynamic", false, "v1"},
	} {
		_ = os.RemoveAll(filepath.Dir(dest))
		testutil.WriteFile(t, src, []byte("v1"))
		if _, err := seedZone(layoutSeed(src, dest, tc.refresh), nil); err != nil {
			t.Fatal(err)
		}
		testutil.WriteFile(t, src, []byte("v2"))
		if _, err := seedZone(layoutSeed(src, dest, tc.refresh), nil); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(dest); string(b) != tc.want {
			t.Errorf("%s: after a new render the data file holds %q, want %q", tc.name, b, tc.want)
		}
	}
}

func layoutSeed(src, dest string, refresh bool) layout.SeedZone {
	return layout.SeedZone{Zone: "example.com", Source: src, Dest: dest, Refresh: refresh}
}
