#!/usr/bin/env bash
# hack/bench-scale.sh — render time and peak memory of bin/fn-render at many
# zones (issue #35), next to the identity KRM function (hack/identity-fn:
# the same SDK reading and writing the same ResourceList) on the same input,
# in the same run. Not part of `make test`.
#
# For each zone count it generates one package (bind-fn-gen, seed 1, 10
# records a zone, two views, every tenth zone dynamic, 10% of the records as
# DNSRecords) and measures both functions RUNS times: wall time and CPU
# (user + system) medians, peak RSS median (/usr/bin/time). fn-render's
# output is checked once per size: no error result, and the number of
# zones ConfigMaps it wrote. Results: out/bench-scale/results.tsv and a
# table on stdout. PROFILE=1 writes CPU and allocation profiles of the
# render at the largest size (hack/fnprof) into out/bench-scale/.
#
# IDENTITY_MAX (default 10000): identity runs only up to that many zones;
# it holds the whole ResourceList as a node tree (2.5 GiB at 10k zones,
# about 25 GiB at 100k, more than a 23 GiB machine has). REF=path/to/an
# older fn-render: its output at each size is compared with this one's,
# byte for byte except the Secrets' key material (new on every render).
#
#   ZONES="1000 10000 100000" RUNS=3 hack/bench-scale.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
ZONES=${ZONES:-"1000 10000 100000"}
RUNS=${RUNS:-3}
IDENTITY_MAX=${IDENTITY_MAX:-10000}
REF=${REF:-}
PROFILE=${PROFILE:-0}
OUT=${OUT:-$ROOT/out/bench-scale}
BIN=$OUT/bin
mkdir -p "$OUT" "$BIN"
[ -x /usr/bin/time ] || { echo "bench-scale: /usr/bin/time is missing: apt-get install -y time" >&2; exit 1; }

GOBUILD=(env CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags '-s -w')
"${GOBUILD[@]}" -o "$BIN/fn-render" ./fn-render
"${GOBUILD[@]}" -o "$BIN/identity-fn" ./hack/identity-fn
"${GOBUILD[@]}" -o "$BIN/bind-fn-gen" ./hack/bind-fn-gen
go build -o "$BIN/fnprof" ./hack/fnprof

RESULTS=$OUT/results.tsv
: >"$RESULTS"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# measure NAME ZONES CMD...: RUNS runs of CMD, stdin $IN, stdout discarded.
measure() {
	local name=$1 n=$2 ts=() rss=() cpu=() i t m u s
	shift 2
	for ((i = 0; i < RUNS; i++)); do
		if ! /usr/bin/time -o "$OUT/time.txt" -f '%e %M %U %S' "$@" <"$IN" >/dev/null 2>"$OUT/stderr.txt"; then
			echo "bench-scale: $name at $n zones failed:" >&2
			cat "$OUT/stderr.txt" >&2
			exit 1
		fi
		read -r t m u s < <(tail -1 "$OUT/time.txt")
		ts+=("$t")
		rss+=("$m")
		cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')")
	done
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$(median "${ts[@]}")" "$(median "${rss[@]}")" "$(median "${cpu[@]}")" "$(printf '%s,' "${ts[@]}")" >>"$RESULTS"
	echo "bench-scale: $name $n zones: wall ${ts[*]} s, peak RSS ${rss[*]} KiB" >&2
}

for n in $ZONES; do
	IN=$OUT/rl-$n.yaml
	"$BIN/bind-fn-gen" -zones "$n" -records $((10 * n)) -seed 1 -views 2 -dynamic 10 >"$IN"
	echo "bench-scale: $n zones: $(wc -c <"$IN") bytes of ResourceList" >&2
	"$BIN/fn-render" <"$IN" >"$OUT/out-$n.yaml"
	if grep -q "severity: error" "$OUT/out-$n.yaml"; then
		echo "bench-scale: fn-render at $n zones reported errors:" >&2
		grep -A3 "severity: error" "$OUT/out-$n.yaml" | head -20 >&2
		exit 1
	fi
	if [ -n "$REF" ]; then
		# Key material is new in every render: those lines differ by design.
		keys='tsig.conf:|key.conf:|secret:'
		if ! cmp -s <("$REF" <"$IN" | grep -vE "$keys") <(grep -vE "$keys" "$OUT/out-$n.yaml"); then
			echo "bench-scale: fn-render's output at $n zones differs from $REF's" >&2
			exit 1
		fi
		echo "bench-scale: $n zones: output identical to $REF's (but for key material)" >&2
	fi
	shards=$(grep -c "^    name: gen-zones-" "$OUT/out-$n.yaml" || true)
	printf 'shards\t%s\t%s\t%s\t%s\t-\n' "$n" "$shards" "$(wc -c <"$OUT/out-$n.yaml")" 0 >>"$RESULTS"
	if [ "$n" -le "$IDENTITY_MAX" ]; then
		measure identity "$n" "$BIN/identity-fn"
	fi
	measure fn-render "$n" "$BIN/fn-render"
	rm -f "$OUT/out-$n.yaml"
done

if [ "$PROFILE" = 1 ]; then
	last=${ZONES##* }
	"$BIN/fnprof" -mode render -cpuprofile "$OUT/cpu.out" -memprofile "$OUT/mem.out" "$OUT/rl-$last.yaml"
	go tool pprof -top -cum "$BIN/fnprof" "$OUT/cpu.out" 2>/dev/null | head -45 >"$OUT/cpu.top"
	go tool pprof -top -sample_index=alloc_space "$BIN/fnprof" "$OUT/mem.out" 2>/dev/null | head -30 >"$OUT/mem.top"
	echo "bench-scale: profiles at $last zones: $OUT/cpu.top, $OUT/mem.top" >&2
fi

echo
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| zones | input MiB | identity wall s (cpu) | fn-render wall s (cpu) | render/identity wall (cpu) | peak RSS MiB identity / fn-render | zones ConfigMaps | output MiB |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $ZONES; do
	awk -F'\t' -v n="$n" -v in_bytes="$(wc -c <"$OUT/rl-$n.yaml")" '
		$2 == n { t[$1] = $3; m[$1] = $4; c[$1] = $5 }
		END {
			if ("identity" in t) {
				id = sprintf("%.2f (%.2f)", t["identity"], c["identity"])
				ratio = sprintf("%.2f× (%.2f×)", t["fn-render"] / t["identity"], c["fn-render"] / c["identity"])
				idm = sprintf("%.0f", m["identity"] / 1024)
			} else {
				id = "not run"; ratio = "—"; idm = "—"
			}
			printf "| %d | %.1f | %s | %.2f (%.2f) | %s | %s / %.0f | %d | %.1f |\n", n, in_bytes / 1048576,
				id, t["fn-render"], c["fn-render"], ratio, idm, m["fn-render"] / 1024, t["shards"], m["shards"] / 1048576
		}' "$RESULTS"
done
