package zonefile

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// zoneSrc is the Source of the BindZone the test zones come from.
var zoneSrc = diag.Source{Ref: diag.ObjectRef{APIVersion: "bind.unkin.net/v1alpha1", Kind: "BindZone", Namespace: "dns", Name: "example"}, File: "zones.yaml"}

// recordSrc is the Source of a DNSRecord.
func recordSrc(name string) diag.Source {
	return diag.Source{Ref: diag.ObjectRef{APIVersion: "bind.unkin.net/v1alpha1", Kind: "DNSRecord", Namespace: "dns", Name: name}, File: "records.yaml"}
}

func i32(v int32) *int32                     { return &v }
func u32(v uint32) *uint32                   { return &v }
func recs(rs ...*model.RRset) []*model.RRset { return rs }

// inline is spec.records[i] of the test BindZone.
func inline(i int, name, typ string, values ...string) *model.RRset {
	return &model.RRset{Src: zoneSrc, Field: "spec.records[" + itoa(i) + "]", Name: name, Type: typ, Values: values}
}

// record is a DNSRecord object's RRset.
func record(obj, name, typ string, values ...string) *model.RRset {
	return &model.RRset{Src: recordSrc(obj), Field: "spec", Name: name, Type: typ, Values: values, FromRecord: true}
}

func withTTL(s *model.RRset, ttl int32) *model.RRset { s.TTL = &ttl; return s }

func itoa(i int) string { return strconv.Itoa(i) }

// testZone is a primary zone with the given spec pieces.
func testZone(name string, ns []string, soa *v1alpha1.SOASpec, rrsets ...*model.RRset) *model.Zone {
	return &model.Zone{Src: zoneSrc, Name: name, Spec: v1alpha1.BindZoneSpec{ZoneName: name, Type: v1alpha1.ZonePrimary, Nameservers: ns, SOA: soa}, RRsets: rrsets}
}

// checkZone runs the real named-checkzone of every BIND release
// (bindtools) on text, strictly.
func checkZone(t *testing.T, origin string, text []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db.zone")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	// -k/-n/-m/-M/-S/-r fail: every check BIND can make fails the test, not
	// just warns. -i local: integrity checks of in-zone names only.
	out, err := bindtools.OnEvery(t, func(r bindtools.Release) (string, error) {
		out, err := r.Offline(t, "named-checkzone", "-i", "local", "-k", "fail", "-n", "fail", "-m", "fail", "-M", "fail", "-S", "fail", "-r", "fail", origin, path).CombinedOutput()
		return string(out), err
	})
	if err != nil {
		t.Fatalf("named-checkzone %s rejects the zone: %v\n%s\n--- zone ---\n%s", origin, err, out, text)
	}
	return out
}

// roundTrip proves that parsing Text() gives back the SOA and the RRs.
func roundTrip(t *testing.T, z *Zone, serial uint32) {
	t.Helper()
	rrs, err := parseAll(string(z.Text(serial)), z.Origin)
	if err != nil {
		t.Fatalf("parseAll(Text()): %v", err)
	}
	soa := *z.SOA
	soa.Serial = serial
	want := []string{soa.String()}
	for _, rr := range z.RRs {
		want = append(want, rr.String())
	}
	var got []string
	for _, rr := range rrs {
		got = append(got, rr.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse(Text()) differs: -want +got\n%s", diff)
	}
}
