package plan

import (
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
)

func TestCompareKeys(t *testing.T) {
	k := func(secret string, material byte, imported bool) keyState {
		return keyState{secret: secret, algorithm: "hmac-sha256", digest: [32]byte{material}, imported: imported}
	}
	cases := map[string]struct {
		reason   string
		old, new map[string]keyState
		want     []KeyChange
	}{
		"Same": {
			reason: "The same material under the same Secret is no change.",
			old:    map[string]keyState{"a": k("a-tsig", 1, false)},
			new:    map[string]keyState{"a": k("a-tsig", 1, false)},
		},
		"Rotated": {
			reason: "New material under the same name is a rotation; the material itself is never in the plan.",
			old:    map[string]keyState{"a": k("a-tsig", 1, false)},
			new:    map[string]keyState{"a": k("a-tsig", 2, false)},
			want:   []KeyChange{{Name: "a", Change: Rotated, Secret: "a-tsig"}},
		},
		"CreatedRemoved": {
			reason: "Keys only on one side are created or removed.",
			old:    map[string]keyState{"a": k("a-tsig", 1, false)},
			new:    map[string]keyState{"b": k("b-tsig", 1, true)},
			want:   []KeyChange{{Name: "a", Change: Removed, Secret: "a-tsig"}, {Name: "b", Change: Created, Secret: "b-tsig", Imported: true}},
		},
		"Imported": {
			reason: "A key switched to importExisting changes how it is delivered.",
			old:    map[string]keyState{"a": k("a-tsig", 1, false)},
			new:    map[string]keyState{"a": k("a-tsig", 0, true)},
			want:   []KeyChange{{Name: "a", Change: Changed, Secret: "a-tsig", Imported: true}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := compareKeys(&snapshot{keys: tc.old}, &snapshot{keys: tc.new})
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, d)
			}
		})
	}
}

func TestParseZoneSplice(t *testing.T) {
	s := &snapshot{}
	s.files.Add(diag.Source{}, 1, map[string][]byte{"big.part-000": []byte("b 60 IN A 192.0.2.2\n")})
	s.files.Add(diag.Source{}, 0, map[string][]byte{
		"big":  []byte("$ORIGIN big.\n@ 60 IN SOA ns. h. 7 1 1 1 1\n@ 60 IN NS ns.\na 60 IN A 192.0.2.1\n$INCLUDE /etc/bind-fn/zones/1/big.part-000\n"),
		"lost": []byte("$INCLUDE /nowhere\n"),
	})
	text, err := s.files.File("/etc/bind-fn/zones/0/big")
	if err != nil {
		t.Fatal(err)
	}
	sets, soa, err := parseZone("big", "main", text)
	if err != nil {
		t.Fatal(err)
	}
	if soa == nil || soa.Serial != 7 {
		t.Errorf("SOA: got %v, want serial 7", soa)
	}
	got := map[string][]string{}
	for k, v := range sets {
		got[k.name+" "+dns.TypeToString[k.typ]] = v.values
	}
	want := map[string][]string{"big. NS": {"ns."}, "a.big. A": {"192.0.2.1"}, "b.big. A": {"192.0.2.2"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("a zone split by the renderer's $INCLUDE reads as one (-want +got):\n%s", d)
	}
	if _, err := s.files.File("/etc/bind-fn/zones/0/lost"); err == nil {
		t.Error("an $INCLUDE of a file no ConfigMap holds must fail")
	}
}

func TestJSONPaths(t *testing.T) {
	a := []byte(`{"spec":{"containers":[{"image":"a","name":"named"}],"volumes":[1]}}`)
	b := []byte(`{"spec":{"containers":[{"image":"b","name":"named"}],"volumes":[1,2]}}`)
	got := jsonPaths("spec.template", a, b, 4)
	want := []string{"spec.template.spec.containers[0].image", "spec.template.spec.volumes"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("-want +got:\n%s", d)
	}
}

func TestDiffLines(t *testing.T) {
	rem, add := diffLines([]string{"a", "b", "b", "c"}, []string{"b", "c", "d"})
	if d := cmp.Diff([][]string{{"a", "b"}, {"d"}}, [][]string{rem, add}); d != "" {
		t.Errorf("multiset difference (-want +got):\n%s", d)
	}
}

func TestRdata(t *testing.T) {
	for s, want := range map[string]string{
		"a.example. 60 IN TXT \"x\\009y\" \"two words\"": "\"x\\009y\" \"two words\"",
		"a\\009b.example. 60 IN A 192.0.2.1":             "192.0.2.1",
		"example. 60 IN SOA ns. h. 1 2 3 4 5":            "ns. h. 1 2 3 4 5",
		// An unknown type's header prints differently from its RR.
		"example. 60 IN TYPE65534 \\# 2 0102": "\\# 2 0102",
	} {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Rdata(rr); got != want {
			t.Errorf("Rdata(%q) = %q, want %q", s, got, want)
		}
	}
}
