package render

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShardFiles(t *testing.T) {
	zone := func(name string, records int) zoneFile {
		var b strings.Builder
		b.WriteString("$ORIGIN x.\n$TTL 60\nx.\t60\tIN\tSOA\tns. h. 1 2 3 4 5\n")
		for i := 0; i < records; i++ {
			b.WriteString("a.x.\t60\tIN\tA\t192.0.2.1\n") // 23 bytes; the header is 49
		}
		return zoneFile{name: name, text: []byte(b.String())}
	}
	type shard map[string]int // key -> size
	cases := map[string]struct {
		reason string
		files  []zoneFile
		want   []shard
	}{
		"Packed": {
			reason: "small files share a shard until the next would not fit",
			files:  []zoneFile{zone("a", 1), zone("b", 1), zone("c", 1)},
			want:   []shard{{"a": 72, "b": 72}, {"c": 72}},
		},
		"Split": {
			reason: "a file over the budget becomes parts of at most the budget, cut at lines, and a header that includes them",
			files:  []zoneFile{zone("big", 10)},
			want: []shard{{"big.part-000": 6 * 23}, {"big.part-001": 4 * 23},
				{"big": 49 + 2*len("$INCLUDE /etc/bind-fn/zones/0/big.part-000\n")}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			shards, where := shardFiles(tc.files, 150)
			var got []shard
			for i, s := range shards {
				g := shard{}
				for k, v := range s {
					g[k] = len(v)
					if where[k] != i {
						t.Errorf("%s: where[%s] = %d, want %d", tc.reason, k, where[k], i)
					}
				}
				got = append(got, g)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: shards (-want +got):\n%s", tc.reason, diff)
			}
			// Reassembled, a split file is the original.
			for _, f := range tc.files {
				main := shards[where[f.name]][f.name]
				whole := includeRE.ReplaceAllStringFunc(main, func(m string) string {
					p := strings.TrimSpace(strings.TrimPrefix(m, "$INCLUDE "))
					k := p[strings.LastIndex(p, "/")+1:]
					return shards[where[k]][k]
				})
				if whole != string(f.text) {
					t.Errorf("%s: %s reassembled differs from the original", tc.reason, f.name)
				}
			}
		})
	}
}

var includeRE = regexp.MustCompile(`(?m)^\$INCLUDE \S+\n`)
