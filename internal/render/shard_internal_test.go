package render

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// bigZone is a zone file as Text writes it with n A records.
func bigZone(name string, n int) zoneFile {
	var b strings.Builder
	b.WriteString("$ORIGIN x.\n$TTL 60\nx. 60 IN SOA ns. h. 1 2 3 4 5\n")
	for i := range n {
		fmt.Fprintf(&b, "a%d.x. 60 IN A 192.0.2.1\n", i)
	}
	return zoneFile{name: name, text: []byte(b.String())}
}

var includeRE = regexp.MustCompile(`(?m)^\$INCLUDE (\S+)\n`)

// join is a split file reassembled from its parts.
func join(main zoneFile, parts []zoneFile) string {
	byPath := map[string]string{}
	for _, p := range parts {
		byPath[pending(p.name)] = string(p.text)
	}
	return includeRE.ReplaceAllStringFunc(string(main.text), func(m string) string {
		return byPath[includeRE.FindStringSubmatch(m)[1]]
	})
}

func TestSplitFile(t *testing.T) {
	small := bigZone("db.small", 10)
	if m, parts := splitFile(small); len(parts) != 0 || string(m.text) != string(small.text) {
		t.Errorf("a file under %d bytes is split: %d parts", partMax, len(parts))
	}
	big := bigZone("db.big", 20000)
	main, parts := splitFile(big)
	if len(parts) < 4 {
		t.Fatalf("%d bytes in %d parts, want at least 4", len(big.text), len(parts))
	}
	for _, p := range parts {
		if len(p.text) > partMax {
			t.Errorf("part %s holds %d bytes, over %d", p.name, len(p.text), partMax)
		}
		if !regexp.MustCompile(`^db\.big\.part-[0-9a-f]{8}$`).MatchString(p.name) {
			t.Errorf("part name %q", p.name)
		}
	}
	if got := join(main, parts); got != string(big.text) {
		t.Errorf("reassembled, the split file differs from the original")
	}

	// One line inserted in the middle changes one part (or two, when the
	// line itself ends a part), not every part after it: parts are cut by
	// content, not by offset.
	lines := strings.SplitAfter(string(big.text), "\n")
	mid := len(lines) / 2
	edited := zoneFile{name: big.name, text: []byte(strings.Join(lines[:mid], "") + "inserted.x. 60 IN A 192.0.2.9\n" + strings.Join(lines[mid:], ""))}
	_, after := splitFile(edited)
	before := map[string]string{}
	for _, p := range parts {
		before[p.name] = string(p.text)
	}
	changed := 0
	for _, p := range after {
		if before[p.name] != string(p.text) {
			changed++
		}
	}
	if changed == 0 || changed > 2 {
		t.Errorf("one inserted line changed %d of %d parts, want 1 or 2", changed, len(after))
	}
}

func TestResolve(t *testing.T) {
	where := map[string]int{"db.a": 3, "db.b_x.part-0000abcd": 12}
	text := `zone "a" { file "` + pending("db.a") + `"; };` + "\n$INCLUDE " + pending("db.b_x.part-0000abcd") + "\n"
	want := `zone "a" { file "` + layout.ZoneFile(3, "db.a") + `"; };` + "\n$INCLUDE " + layout.ZoneFile(12, "db.b_x.part-0000abcd") + "\n"
	if diff := cmp.Diff(want, string(resolve([]byte(text), func(n string) int { return where[n] }))); diff != "" {
		t.Errorf("resolve (-want +got):\n%s", diff)
	}
}

func TestShardCount(t *testing.T) {
	for name, tc := range map[string]struct {
		reason string
		sizes  []int
		want   int
	}{
		"Empty":   {"nothing is one shard", nil, 1},
		"Small":   {"under the fill is one shard", []int{100, 100, 100}, 1},
		"Average": {"forty budgets' worth of small keys take 1/shardFill shards per budget", repeat(10*1000, 100), 89},
	} {
		t.Run(name, func(t *testing.T) {
			hashes := make([]uint64, len(tc.sizes))
			for i := range hashes {
				hashes[i] = layout.KeyHash(fmt.Sprint("db.zone-", i))
			}
			got := shardCount(hashes, tc.sizes, 1000*100/4)
			if got != tc.want {
				t.Errorf("%s: %d shards, want %d", tc.reason, got, tc.want)
			}
		})
	}
}

func repeat(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestShardOfSplitsOne: one shard more moves keys of one shard only, into
// the new one (linear hashing); one fewer joins them back.
func TestShardOfSplitsOne(t *testing.T) {
	for n := 1; n < 70; n++ {
		moved := map[[2]int]int{}
		for i := range 5000 {
			h := layout.KeyHash(fmt.Sprint("db.zone-", i))
			a, b := layout.ShardOfHash(h, n), layout.ShardOfHash(h, n+1)
			if a >= n || b >= n+1 {
				t.Fatalf("%d shards: key on shard %d; %d shards: %d", n, a, n+1, b)
			}
			if a != b {
				moved[[2]int{a, b}]++
			}
		}
		if len(moved) > 1 {
			t.Errorf("%d → %d shards moves keys between %d pairs of shards, want 1: %v", n, n+1, len(moved), moved)
		}
		for k := range moved {
			if k[1] != n {
				t.Errorf("%d → %d shards moves keys from %d to %d, want to the new shard %d", n, n+1, k[0], k[1], n)
			}
		}
	}
}
