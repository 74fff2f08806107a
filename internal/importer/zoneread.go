package importer

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/miekg/dns"
)

// ZoneReader reads a zone as the server would serve it: origin, the file's
// path, the zone's journal (its `journal` option; "" for BIND's default,
// the file's name + .jnl), applied over the file when it exists, and
// named's working directory (its options `directory`), against which BIND
// resolves relative $INCLUDE names, from any file.
type ZoneReader func(origin, file, journal, dir string) ([]dns.RR, error)

// NamedZoneReader reads zone files with BIND's own loader:
// named-checkzone (or named-compilezone) at path dumps the zone as named
// loads it (-D), run in named's directory, so every rule where miekg/dns
// and BIND differ is BIND's: the TTL of $GENERATE lines without one, a
// file without $TTL (the SOA minimum, or RFC 1035's last explicit TTL),
// $INCLUDE names relative to named's directory, and the zone's journal
// (-j, or -J for a `journal` option), which holds the UPDATEs a dynamic
// zone's file lacks until named next writes it: the zone is read as named
// loads it, file and journal (a journal out of sync with the file is
// refused, as named refuses to load the zone). The checks
// are off (-i none, -k/-n/-m/-M/-S/-T/-W/-r ignore): this reads, the
// server's own options decided what it accepts.
func NamedZoneReader(path string) ZoneReader {
	return func(origin, file, journal, dir string) ([]dns.RR, error) {
		// The file is named as the import found it; named-checkzone runs
		// in named's directory.
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
		if abs, err := filepath.Abs(dir); err == nil && dir != "" {
			dir = abs
		}
		jnl := []string{"-j"}
		if journal != "" {
			if abs, err := filepath.Abs(journal); err == nil {
				journal = abs
			}
			jnl = []string{"-J", journal}
		}
		args := append([]string{"-D", "-o", "-"}, jnl...)
		args = append(args, "-i", "none", "-k", "ignore", "-n", "ignore", "-m", "ignore", "-M", "ignore",
			"-S", "ignore", "-T", "ignore", "-W", "ignore", "-r", "ignore", dns.Fqdn(origin), file)
		cmd := exec.Command(path, args...)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			msg := strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(errb.String()), "\n", "; ")), " ")
			return nil, fmt.Errorf("%s refuses the zone: %s", filepath.Base(path), msg)
		}
		// An *UnreadableError comes with the records that were read.
		return parseDump(origin, file, out.Bytes())
	}
}

// parseDump reads named-checkzone -D output: every record absolute, with
// its TTL, one a line, so miekg/dns reads it as BIND wrote it. Lines
// before the first record ("zone x/IN: loaded serial 5") and the closing
// "OK" are not records. A record miekg/dns cannot read (a type it lacks,
// such as A6) is left out and named in an *UnreadableError, which comes
// with the records read: the zone is carried without them, each a loss.
func parseDump(origin, file string, out []byte) ([]dns.RR, error) {
	var rrs []dns.RR
	var bad []string
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" || line == "OK" || strings.HasPrefix(line, "zone ") || strings.HasPrefix(line, file+":") || strings.HasPrefix(line, ";") {
			continue
		}
		rr, err := dns.NewRR(line)
		if err != nil {
			if rr, err = gposUnquoted(line); err != nil {
				bad = append(bad, strings.Join(strings.Fields(line), " "))
				continue
			}
		}
		if rr != nil {
			rrs = append(rrs, rr)
		}
	}
	if len(bad) > 0 {
		return rrs, &UnreadableError{File: file, Records: bad}
	}
	return rrs, nil
}

// gposUnquoted reads BIND's GPOS form ("-32.6882" "116.8652" "10.0"),
// which miekg/dns reads only unquoted.
func gposUnquoted(line string) (dns.RR, error) {
	f := strings.Fields(line)
	if len(f) != 7 || !strings.EqualFold(f[3], "GPOS") {
		return nil, fmt.Errorf("not a GPOS record")
	}
	for i := 4; i < 7; i++ {
		f[i] = strings.Trim(f[i], `"`)
	}
	return dns.NewRR(strings.Join(f, " "))
}

// UnreadableError names the records of a zone file BIND read and
// miekg/dns cannot (the records that could be read come with it).
type UnreadableError struct {
	File    string
	Records []string
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("%s: %d record(s) miekg/dns cannot read", e.File, len(e.Records))
}

// SignedSerial reads the serial a signed zone serves: its signed version
// (BIND's <file>.signed, raw format, with its journal), which BIND raises
// above the file's serial each time it re-signs.
type SignedSerial func(origin, signedFile string) (uint32, error)

// NamedSignedSerial reads it with named-checkzone -f raw -j at path.
func NamedSignedSerial(path string) SignedSerial {
	return func(origin, signedFile string) (uint32, error) {
		var out, errb bytes.Buffer
		cmd := exec.Command(path, "-f", "raw", "-j", "-D", "-o", "-", "-i", "none", dns.Fqdn(origin), signedFile)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("%s: %s", filepath.Base(path), strings.Join(strings.Fields(errb.String()), " "))
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if rr, err := dns.NewRR(line); err == nil && rr != nil {
				if soa, ok := rr.(*dns.SOA); ok {
					return soa.Serial, nil
				}
			}
		}
		return 0, fmt.Errorf("no SOA in %s", signedFile)
	}
}

// LookNamedZoneReader is NamedZoneReader and NamedSignedSerial with
// named-checkzone from PATH (or /usr/sbin, /usr/bin), nil when BIND's
// tools are not installed.
func LookNamedZoneReader() (ZoneReader, SignedSerial) {
	for _, p := range []string{"named-checkzone", "/usr/sbin/named-checkzone", "/usr/bin/named-checkzone"} {
		if path, err := exec.LookPath(p); err == nil {
			return NamedZoneReader(path), NamedSignedSerial(path)
		}
	}
	return nil, nil
}

// noTTL marks a record miekg/dns gave no TTL: a value no real file holds
// (BIND caps TTLs at 2^31-1).
const noTTL = 0xFFFFFFFF

// ParseZone reads zone file text with miekg/dns, with BIND's rule for a
// file without $TTL (lib/dns/master.c): an SOA without a TTL takes its
// minimum, which then holds like a $TTL; records after an explicit TTL
// keep it (RFC 1035). miekg/dns's other differences from BIND ($GENERATE
// without a TTL, $INCLUDE relative to the including file) are reported by
// the import (bindOnly) when BIND's reader is not there.
func ParseZone(origin, file string, data []byte, includeDir string) ([]dns.RR, error) {
	rrs, err := parseText(origin, file, data)
	if err != nil {
		return nil, err
	}
	for _, rr := range rrs {
		if rr.Header().Ttl != noTTL {
			continue
		}
		soa, ok := rr.(*dns.SOA)
		if !ok {
			return nil, fmt.Errorf("%s: %s %s: no TTL specified, and no $TTL or SOA before it (BIND refuses the zone)", file, rr.Header().Name, dns.TypeToString[rr.Header().Rrtype])
		}
		// The SOA came first without a TTL: BIND reads the file as if it
		// began with $TTL <minimum>.
		return parseText(origin, file, append([]byte(fmt.Sprintf("$TTL %d\n", soa.Minttl)), data...))
	}
	return rrs, nil
}

func parseText(origin, file string, data []byte) ([]dns.RR, error) {
	zp := dns.NewZoneParser(bytes.NewReader(data), dns.Fqdn(origin), file)
	zp.SetIncludeAllowed(true)
	zp.SetDefaultTTL(noTTL)
	var out []dns.RR
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		out = append(out, rr)
	}
	if err := zp.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// bindOnly are the lines of a zone file miekg/dns reads otherwise than
// BIND: $GENERATE (miekg/dns gives lines without a TTL 3600, BIND the
// default TTL) and $INCLUDE of a relative name (miekg/dns resolves it from
// the including file, BIND from named's directory).
func bindOnly(file string, data []byte) []Loss {
	var out []Loss
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "$GENERATE":
			out = append(out, Loss{Where: fmt.Sprintf("%s:%d", file, i+1), What: clip(strings.TrimSpace(line)), Why: "read by miekg/dns, which gives $GENERATE lines without a TTL 3600 where BIND gives the default TTL: import where named-checkzone is installed"})
		case "$INCLUDE":
			if !filepath.IsAbs(strings.Trim(f[1], `"`)) {
				out = append(out, Loss{Where: fmt.Sprintf("%s:%d", file, i+1), What: clip(strings.TrimSpace(line)), Why: "read by miekg/dns, which resolves a relative $INCLUDE from the including file where BIND resolves it from named's directory: import where named-checkzone is installed"})
			}
		}
	}
	return out
}
