package zonefile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStateOf: the state read back from a rendered file is the state the
// render had: the serial it wrote and the hash Build computed, for every
// zone form (escaped owners, long TXT, unknown types), and for the
// tab-separated file an earlier release wrote.
func TestStateOf(t *testing.T) {
	rich, rs := Build(richZone())
	if rs.HasErrors() {
		t.Fatal(rs)
	}
	minimal, _ := Build(testZone("minimal.test.", nil, nil, inline(0, "ns1", "A", "192.0.2.1")))
	cases := map[string]struct {
		reason string
		zone   *Zone
		serial uint32
		edit   func(text []byte) []byte
	}{
		"rich":       {reason: "every record form of the golden rich zone", zone: rich, serial: 7},
		"max serial": {reason: "the largest serial", zone: minimal, serial: 0xFFFFFFFF},
		"tabbed file": {reason: "a file written with miekg's tabs and no hash comment (before this release) reads to the same state", zone: rich, serial: 42,
			edit: func([]byte) []byte { return tabbed(rich, 42) }},
		"no comment": {reason: "without the hash comment the hash is computed from the text, to the same value", zone: rich, serial: 9,
			edit: func(b []byte) []byte {
				return bytes.Replace(b, []byte(HashComment+rich.Hash), nil, 1)
			}},
		"hand-merged": {reason: "records merged by hand under the SOA line of one side: the state is that side's, the hash its SOA line records", zone: minimal, serial: 2,
			edit: func(b []byte) []byte { return append(b, "extra.minimal.test. 60 IN A 192.0.2.9\n"...) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			text := tc.zone.Text(tc.serial)
			if bytes.IndexByte(text, '\t') >= 0 {
				t.Fatalf("%s: Text wrote a tab", tc.reason)
			}
			if tc.edit != nil {
				text = tc.edit(text)
			}
			origin, st, err := StateOf(text)
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if diff := cmp.Diff(State{Serial: tc.serial, Hash: tc.zone.Hash}, st); diff != "" || origin != tc.zone.Origin {
				t.Errorf("%s: origin %q (want %q), state (-want +got):\n%s", tc.reason, origin, tc.zone.Origin, diff)
			}
		})
	}
}

// tabbed is the file as Text wrote it before: miekg's own lines.
func tabbed(z *Zone, serial uint32) []byte {
	soa := *z.SOA
	soa.Serial = serial
	var b strings.Builder
	b.WriteString("$ORIGIN " + z.Origin + "\n$TTL ")
	b.WriteString(strings.Fields(string(z.header(0, "")))[3] + "\n")
	b.WriteString(soa.String() + "\n")
	for _, rr := range z.RRs {
		b.WriteString(rr.String() + "\n")
	}
	return []byte(b.String())
}

func TestStateOfRefuses(t *testing.T) {
	cases := map[string]struct {
		reason string
		text   string
		want   string
	}{
		"empty":      {reason: "no header", text: "", want: "line 1: the file ends before its SOA"},
		"no origin":  {reason: "a file that is not ours", text: "$TTL 60\n$ORIGIN a.\na. 60 IN SOA a. a. 1 1 1 1 1\n", want: "line 1: want"},
		"bad ttl":    {reason: "a broken $TTL", text: "$ORIGIN a.\n$TTL x\na. 60 IN SOA a. a. 1 1 1 1 1\n", want: "line 2: \"x\" is not a TTL"},
		"no soa":     {reason: "the third line is another record", text: "$ORIGIN a.\n$TTL 60\na. 60 IN NS a.\n", want: "line 3: want the SOA record, not NS"},
		"bad record": {reason: "the SOA does not parse", text: "$ORIGIN a.\n$TTL 60\na. 60 IN SOA a.\n", want: "line 3:"},
		"bad hash":   {reason: "a hash comment that is no hash", text: "$ORIGIN a.\n$TTL 60\na. 60 IN SOA a. a. 1 1 1 1 1" + HashComment + "xyz\n", want: `line 3: "xyz" is not a content hash`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := StateOf([]byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error %v, want one containing %q", tc.reason, err, tc.want)
			}
		})
	}
}
