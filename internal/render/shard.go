package render

import (
	"bytes"
	"fmt"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// Shards (docs/state.md#shards): every ConfigMap key of a cluster's zones —
// zone files, their parts, tombstones, and each zone's statements and agent
// configuration — is placed by its key alone (layout.ShardOf), over a count
// of shards that follows the total size (shardCount). Adding, removing or
// changing one zone changes its own shard; the count changes by one now and
// then, which splits or joins one shard and changes <cluster>-config's list
// of shards.

const (
	// partMax is the largest part of a split file: shards are filled by
	// hashing, so no single key may take much of one.
	partMax = ShardBudget / 8
	// partMin is the smallest part but a file's last: a part ends at a
	// content-defined line (partCut) once it holds partMin bytes.
	partMin = partMax / 4
	// partCut: a line ends a part with probability len(line)/partCut, by its
	// hash, so the parts of a file average about partMin+partCut bytes, and a
	// line inserted or removed changes its own part only.
	partCut = partMax / 3
	// shardFill is the average share of the budget a shard is given: with
	// linear hashing the fullest shards hold up to twice the average, so
	// they stay under 90% of the budget.
	shardFill = 0.45
)

// partSuffix names the parts of a split zone file: <file>.part-<8 hex>, by
// a hash of the part's first line.
const partSuffix = ".part-%08x"

// pendingDir starts the path of a key whose shard is not known yet: text
// that names another key's path in the pod (a statement's file, a $INCLUDE,
// a seed's source) is written with pending(name) and resolved once every
// key is placed. Zone file names hold only [a-z0-9._-] (model.ZoneFileName).
const pendingDir = layout.ZonesDir + "/@/"

func pending(name string) string { return pendingDir + name }

// resolve replaces every pending(name) in text by name's path in the pod.
func resolve(text []byte, where func(name string) int) []byte {
	if !bytes.Contains(text, []byte(pendingDir)) {
		return text
	}
	var out bytes.Buffer
	out.Grow(len(text) + 64)
	for {
		i := bytes.Index(text, []byte(pendingDir))
		if i < 0 {
			out.Write(text)
			return out.Bytes()
		}
		out.Write(text[:i])
		text = text[i+len(pendingDir):]
		j := 0
		for j < len(text) && nameByte(text[j]) {
			j++
		}
		name := string(text[:j])
		out.WriteString(layout.ZoneFile(where(name), name))
		text = text[j:]
	}
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
}

// splitFile: a file of at most partMax bytes is returned as it is. A larger
// one keeps only its header ($ORIGIN, $TTL and the SOA) followed by one
// `$INCLUDE <path>` per part, and its records go into parts cut at line
// boundaries chosen by content (partCut), each at most partMax bytes. Every
// RR line Text writes is self-contained (absolute owner, explicit TTL and
// class), so any line boundary is a valid cut.
//
// Every file may be split, dynamic and signed zones' too: the agent inlines
// the parts when it seeds such a zone into the data volume
// (agent.ReadZoneText).
func splitFile(f zoneFile) (main zoneFile, parts []zoneFile) {
	if len(f.text) <= partMax {
		return f, nil
	}
	head, body := splitHeader(f.text)
	var m bytes.Buffer
	m.Write(head)
	seen := map[string]bool{}
	for i, chunk := range cutLines(body) {
		first := chunk
		if n := bytes.IndexByte(chunk, '\n'); n >= 0 {
			first = chunk[:n]
		}
		name := f.name + fmt.Sprintf(partSuffix, uint32(layout.KeyHash(string(first))))
		if seen[name] { // the same first line twice: Text never writes it
			name = f.name + fmt.Sprintf(partSuffix, uint32(layout.KeyHash(fmt.Sprint(i, string(first)))))
		}
		seen[name] = true
		parts = append(parts, zoneFile{name: name, text: chunk})
		fmt.Fprintf(&m, "$INCLUDE %s\n", pending(name))
	}
	return zoneFile{name: f.name, text: m.Bytes()}, parts
}

// splitHeader cuts a zone file as Text writes it after its third line
// ($ORIGIN, $TTL, SOA).
func splitHeader(text []byte) (head, body []byte) {
	n := 0
	for i, c := range text {
		if c == '\n' {
			n++
			if n == 3 {
				return text[:i+1], text[i+1:]
			}
		}
	}
	return text, nil
}

// cutLines cuts text at line boundaries into chunks of at most partMax
// bytes (a single longer line, which Text never writes, gets a chunk of its
// own): a chunk ends after a line whose hash picks it (partCut) once the
// chunk holds partMin bytes, or where the next line would pass partMax.
func cutLines(text []byte) [][]byte {
	var out [][]byte
	start, size := 0, 0
	for i := 0; i < len(text); {
		j := bytes.IndexByte(text[i:], '\n')
		if j < 0 {
			j = len(text)
		} else {
			j += i + 1
		}
		line := text[i:j]
		if size > 0 && size+len(line) > partMax {
			out = append(out, text[start:i])
			start, size = i, 0
		}
		size += len(line)
		i = j
		if size >= partMin && layout.KeyHash(string(line))%partCut < uint64(len(line)) {
			out = append(out, text[start:i])
			start, size = i, 0
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// shardCount is how many shards keys of these hashes and sizes take: the
// count that gives each shard shardFill of budget on average, then one more
// while any shard would pass budget (a few large keys on one shard).
func shardCount(hashes []uint64, sizes []int, budget int) int {
	total := 0
	for _, s := range sizes {
		total += s
	}
	n := int(float64(total)/(shardFill*float64(budget))) + 1
	load := make([]int, 0, n)
	for ; ; n++ {
		load = load[:0]
		load = append(load, make([]int, n)...)
		fits := true
		for i, h := range hashes {
			s := layout.ShardOfHash(h, n)
			load[s] += sizes[i]
			if load[s] > budget {
				fits = false
				break
			}
		}
		if fits {
			return n
		}
	}
}
