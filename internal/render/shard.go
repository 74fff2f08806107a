package render

import (
	"bytes"
	"fmt"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// partSuffix names the parts of a split zone file: <file>.part-000, ...
const partSuffix = ".part-%03d"

// shardFiles packs zone files, in the order given (sorted by name), into
// shards (the data of the <cluster>-zones-<i> ConfigMaps) of at most budget
// bytes each. A file larger than the budget is split at line boundaries into
// parts of at most budget bytes, each in the next shard with room; the file
// itself then keeps only its header ($ORIGIN, $TTL and the SOA, everything
// before the first record) followed by one `$INCLUDE <absolute path>` per
// part, by the path where the pod mounts it. Every RR line Text writes is
// self-contained (absolute owner, explicit TTL and class), so any line
// boundary is a valid split point.
//
// Every file may be split, dynamic and signed zones' too: the agent inlines
// the parts when it seeds such a zone into the data volume
// (agent.ReadZoneText). where maps every key (parts included) to its shard.
func shardFiles(files []zoneFile, budget int) (shards []map[string]string, where map[string]int) {
	shards = []map[string]string{{}}
	where = map[string]int{}
	size := 0
	place := func(name string, text []byte) {
		if size > 0 && size+len(text) > budget {
			shards = append(shards, map[string]string{})
			size = 0
		}
		shards[len(shards)-1][name] = string(text)
		size += len(text)
		where[name] = len(shards) - 1
	}
	for _, f := range files {
		if len(f.text) <= budget {
			place(f.name, f.text)
			continue
		}
		head, body := splitHeader(f.text)
		var main bytes.Buffer
		main.Write(head)
		for i, part := range splitLines(body, budget) {
			name := f.name + fmt.Sprintf(partSuffix, i)
			place(name, part)
			fmt.Fprintf(&main, "$INCLUDE %s\n", layout.ZoneFile(where[name], name))
		}
		place(f.name, main.Bytes())
	}
	return shards, where
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

// splitLines cuts text at line boundaries into chunks of at most max bytes
// (a single longer line, which Text never writes, gets a chunk of its own).
func splitLines(text []byte, max int) [][]byte {
	var out [][]byte
	for len(text) > 0 {
		if len(text) <= max {
			out = append(out, text)
			break
		}
		cut := bytes.LastIndexByte(text[:max], '\n') + 1
		if cut == 0 {
			cut = bytes.IndexByte(text, '\n') + 1
			if cut == 0 {
				cut = len(text)
			}
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	return out
}
