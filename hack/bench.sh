#!/usr/bin/env bash
# hack/bench.sh — whole-process benchmark of bin/fn-render and bin/fn-validate
# (`make bench`; not part of `make test`).
#
# For each size it generates one package (bind-fn-gen, seed 1, two views,
# one zone per 10k records) and measures, in the same run and on the same
# input:
#   fn-render, fn-validate   the functions, ResourceList on stdin
#   identity                 hack/identity-fn: the same KRM SDK reading and
#                            writing the same ResourceList (the IO floor)
#   named-checkzone          BIND's checker over the same zones, one process
#                            per zone, in a private network namespace (the
#                            validation floor)
#   crossplane               the Crossplane function's RunFunction
#                            (internal/xfn) in a process of its own
#                            (hack/xfn-bench): the package inline in an
#                            XBindCluster, a serialized RunFunctionRequest in,
#                            the serialized response out
# and the tiny package examples/authoritative (as kpt hands it over).
#
# Wall time is the median of RUNS runs (/usr/bin/time), peak RSS the median
# of the runs' maximum resident set. Results go to out/bench/results.tsv and
# a table on stdout. PROFILE=1 also writes pprof CPU and allocation profiles
# of fn-render at the largest size into out/bench/.
#
# ONEZONE_SIZES (default 100000) also measures fn-validate against
# named-checkzone on a package of ONE zone of that many records (the serial
# path: one large zone cannot be spread over cores), and hack/yaml-floor on
# it: yaml.v2 parsing every item into nothing, the least any fn-validate on
# a maintained YAML library can cost.
#
#   SIZES="1000 10000 100000 200000" RUNS=5 BIG_RUNS=3 hack/bench.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SIZES=${SIZES:-"1000 10000 100000 200000"}
RUNS=${RUNS:-5}         # runs per measurement below 100k records
BIG_RUNS=${BIG_RUNS:-3} # runs per measurement at 100k records and more
PROFILE=${PROFILE:-0}
ONEZONE_SIZES=${ONEZONE_SIZES-100000}
OUT=${OUT:-$ROOT/out/bench}
BIN=$OUT/bin
mkdir -p "$OUT" "$BIN"

[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing: apt-get install -y time" >&2; exit 1; }
command -v named-checkzone >/dev/null || { echo "bench: named-checkzone is missing: apt-get install -y bind9-utils" >&2; exit 1; }
command -v unshare >/dev/null || { echo "bench: unshare (util-linux) is missing" >&2; exit 1; }

echo "bench: building into $BIN" >&2
GOBUILD=(env CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags '-s -w')
"${GOBUILD[@]}" -o "$BIN/fn-render" ./fn-render
"${GOBUILD[@]}" -o "$BIN/fn-validate" ./fn-validate
"${GOBUILD[@]}" -o "$BIN/identity-fn" ./hack/identity-fn
"${GOBUILD[@]}" -o "$BIN/yaml-floor" ./hack/yaml-floor
"${GOBUILD[@]}" -o "$BIN/bind-fn-gen" ./hack/bind-fn-gen
go build -o "$BIN/fnprof" ./hack/fnprof

# measure NAME N RUNS CMD... : runs CMD (stdin from $IN, stdout discarded)
# RUNS times; appends "name records median_wall_s median_rss_kb
# median_cpu_s wall_runs" to results. CPU is user + system time of the
# process and its children: on a shared machine it is steadier than wall.
RESULTS=$OUT/results.tsv
: >"$RESULTS"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {
	local name=$1 n=$2 runs=$3
	shift 3
	local ts=() rss=() cpu=() i
	for ((i = 0; i < runs; i++)); do
		if ! /usr/bin/time -o "$OUT/time.txt" -f '%e %M %U %S' "$@" <"$IN" >/dev/null 2>"$OUT/stderr.txt"; then
			echo "bench: $name at $n records failed:" >&2
			cat "$OUT/stderr.txt" >&2
			exit 1
		fi
		read -r t m u s < <(tail -1 "$OUT/time.txt")
		ts+=("$t")
		rss+=("$m")
		cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')")
	done
	local mt mr mc
	mt=$(median "${ts[@]}")
	mr=$(median "${rss[@]}")
	mc=$(median "${cpu[@]}")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$mt" "$mr" "$mc" "$(printf '%s,' "${ts[@]}")" >>"$RESULTS"
	printf 'bench: %-16s %7s records  wall %6.2f s  cpu %6.2f s  %7d KiB  (wall runs: %s)\n' "$name" "$n" "$mt" "$mc" "$mr" "${ts[*]}" >&2
}

# checkzones FILE: named-checkzone over every zone in zones.list, offline
# (BIND's checkers look up out-of-zone names through the system resolver).
cat >"$OUT/checkzones.sh" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
while read -r zone file; do
	named-checkzone -q -i local "$zone" "$file" || { echo "named-checkzone $zone $file failed" >&2; exit 1; }
done <"$1"
EOF
chmod +x "$OUT/checkzones.sh"

TINY_MEAN=""
CROSSPLANE=""
if [ -d internal/xfn ] && "${GOBUILD[@]}" -o "$BIN/xfn-bench" ./hack/xfn-bench 2>"$OUT/xfn-build.txt"; then
	CROSSPLANE="measured: hack/xfn-bench (RunFunction of internal/xfn, proto in and out)"
else
	CROSSPLANE="internal/xfn does not build here (see $OUT/xfn-build.txt): the Crossplane RunFunction is not measured"
fi
echo "bench: crossplane: $CROSSPLANE" >&2

# The tiny package, as kpt hands it to a function.
if [ -x bin/kpt ]; then
	bin/kpt fn source examples/authoritative >"$OUT/tiny.yaml"
	IN=$OUT/tiny.yaml
	measure tiny/fn-render 0 "$RUNS" "$BIN/fn-render"
	measure tiny/fn-validate 0 "$RUNS" "$BIN/fn-validate"
	measure tiny/identity 0 "$RUNS" "$BIN/identity-fn"
	# /usr/bin/time counts in 10 ms steps: the mean of 20 runs is finer.
	for f in fn-render fn-validate identity-fn; do
		t0=$(date +%s%N)
		for ((i = 0; i < 20; i++)); do "$BIN/$f" <"$IN" >/dev/null; done
		t1=$(date +%s%N)
		TINY_MEAN+="$f $(((t1 - t0) / 20000)) µs; "
	done
	echo "bench: tiny package, mean wall of 20 runs: $TINY_MEAN" >&2
else
	echo "bench: bin/kpt is missing (make tools): tiny package skipped" >&2
fi

for n in $SIZES; do
	zones=$((n / 10000))
	((zones >= 1)) || zones=1
	runs=$RUNS
	((n < 100000)) || runs=$BIG_RUNS
	IN=$OUT/rl-$n.yaml
	rm -rf "$OUT/zones-$n"
	"$BIN/bind-fn-gen" -zones "$zones" -records "$n" -seed 1 -views 2 -zone-dir "$OUT/zones-$n" >"$IN"
	echo "bench: $n records in $zones zones: $(wc -c <"$IN") bytes of ResourceList" >&2
	measure identity "$n" "$runs" "$BIN/identity-fn"
	measure fn-render "$n" "$runs" "$BIN/fn-render"
	measure fn-validate "$n" "$runs" "$BIN/fn-validate"
	measure named-checkzone "$n" "$runs" unshare -n "$OUT/checkzones.sh" "$OUT/zones-$n/zones.list"
	if [ -x "$BIN/xfn-bench" ]; then
		"$BIN/xfn-bench" -request <"$IN" >"$OUT/req-$n.pb"
		IN=$OUT/req-$n.pb measure crossplane "$n" "$runs" "$BIN/xfn-bench"
	fi
done

for n in $ONEZONE_SIZES; do
	IN=$OUT/rl-1zone-$n.yaml
	rm -rf "$OUT/zones-1zone-$n"
	"$BIN/bind-fn-gen" -zones 1 -records "$n" -seed 1 -zone-dir "$OUT/zones-1zone-$n" >"$IN"
	echo "bench: $n records in one zone: $(wc -c <"$IN") bytes of ResourceList" >&2
	measure 1zone/identity "$n" "$BIG_RUNS" "$BIN/identity-fn"
	measure 1zone/fn-validate "$n" "$BIG_RUNS" "$BIN/fn-validate"
	measure 1zone/yaml-floor "$n" "$BIG_RUNS" "$BIN/yaml-floor"
	measure 1zone/named-checkzone "$n" "$BIG_RUNS" unshare -n "$OUT/checkzones.sh" "$OUT/zones-1zone-$n/zones.list"
done

if [ "$PROFILE" = 1 ]; then
	last=${SIZES##* }
	"$BIN/fnprof" -mode render -cpuprofile "$OUT/cpu.out" -memprofile "$OUT/mem.out" "$OUT/rl-$last.yaml"
	go tool pprof -top -cum "$BIN/fnprof" "$OUT/cpu.out" 2>/dev/null | head -45 >"$OUT/cpu.top"
	go tool pprof -top -sample_index=alloc_space "$BIN/fnprof" "$OUT/mem.out" 2>/dev/null | head -30 >"$OUT/mem.top"
	echo "bench: profiles of fn-render at $last records: $OUT/cpu.top, $OUT/mem.top" >&2
fi

# The tables: per size, medians and the ratios the targets name.
echo
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/ {print $2}') GiB; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| records | identity wall s (cpu) | fn-render wall s (cpu) | render/identity wall (cpu) | fn-validate wall s (cpu) | named-checkzone wall s (cpu) | validate/checkzone wall (cpu) | crossplane wall s (cpu) | peak RSS MiB: identity / fn-render / fn-validate / checkzone / crossplane |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
awk -F'\t' '
	{ t[$1 "/" $2] = $3; m[$1 "/" $2] = $4; c[$1 "/" $2] = $5; if ($1 == "identity" && $2 > 0) sizes[++k] = $2 }
	function r(a, b) { return b > 0 ? sprintf("%.2f×", a / b) : "-" }
	END {
		for (i = 1; i <= k; i++) {
			n = sizes[i]
			printf "| %d | %.2f (%.2f) | %.2f (%.2f) | %s (%s) | %.2f (%.2f) | %.2f (%.2f) | %s (%s) | %s | %.0f / %.0f / %.0f / %.0f / %s |\n", n,
				t["identity/" n], c["identity/" n], t["fn-render/" n], c["fn-render/" n],
				r(t["fn-render/" n], t["identity/" n]), r(c["fn-render/" n], c["identity/" n]),
				t["fn-validate/" n], c["fn-validate/" n], t["named-checkzone/" n], c["named-checkzone/" n],
				r(t["fn-validate/" n], t["named-checkzone/" n]), r(c["fn-validate/" n], c["named-checkzone/" n]),
				(("crossplane/" n) in t) ? sprintf("%.2f (%.2f)", t["crossplane/" n], c["crossplane/" n]) : "-",
				m["identity/" n] / 1024, m["fn-render/" n] / 1024, m["fn-validate/" n] / 1024, m["named-checkzone/" n] / 1024,
				(("crossplane/" n) in m) ? sprintf("%.0f", m["crossplane/" n] / 1024) : "-"
		}
		if (("tiny/fn-render/0") in t)
			printf "\ntiny package (examples/authoritative), wall (cpu): fn-render %.3f s (%.3f), fn-validate %.3f s (%.3f), identity %.3f s (%.3f); peak RSS fn-render %.0f MiB\n", t["tiny/fn-render/0"], c["tiny/fn-render/0"], t["tiny/fn-validate/0"], c["tiny/fn-validate/0"], t["tiny/identity/0"], c["tiny/identity/0"], m["tiny/fn-render/0"] / 1024
	}' "$RESULTS"
awk -F'\t' '
	{ t[$1 "/" $2] = $3; m[$1 "/" $2] = $4; c[$1 "/" $2] = $5; if ($1 == "1zone/fn-validate") sizes[++k] = $2 }
	function r(a, b) { return b > 0 ? sprintf("%.2f×", a / b) : "-" }
	END {
		if (k > 0) {
			print "\n| one zone | identity wall s (cpu) | fn-validate wall s (cpu) | yaml-floor wall s (cpu) | named-checkzone wall s (cpu) | validate/checkzone wall (cpu) | floor/checkzone wall (cpu) | peak RSS MiB: identity / fn-validate / yaml-floor / checkzone |"
			print "|---:|---:|---:|---:|---:|---:|---:|---:|"
		}
		for (i = 1; i <= k; i++) {
			n = sizes[i]
			printf "| %d | %.2f (%.2f) | %.2f (%.2f) | %.2f (%.2f) | %.2f (%.2f) | %s (%s) | %s (%s) | %.0f / %.0f / %.0f / %.0f |\n", n,
				t["1zone/identity/" n], c["1zone/identity/" n], t["1zone/fn-validate/" n], c["1zone/fn-validate/" n],
				t["1zone/yaml-floor/" n], c["1zone/yaml-floor/" n],
				t["1zone/named-checkzone/" n], c["1zone/named-checkzone/" n],
				r(t["1zone/fn-validate/" n], t["1zone/named-checkzone/" n]), r(c["1zone/fn-validate/" n], c["1zone/named-checkzone/" n]),
				r(t["1zone/yaml-floor/" n], t["1zone/named-checkzone/" n]), r(c["1zone/yaml-floor/" n], c["1zone/named-checkzone/" n]),
				m["1zone/identity/" n] / 1024, m["1zone/fn-validate/" n] / 1024, m["1zone/yaml-floor/" n] / 1024, m["1zone/named-checkzone/" n] / 1024
		}
	}' "$RESULTS"
echo
[ -z "$TINY_MEAN" ] || echo "tiny package, mean wall of 20 runs: $TINY_MEAN"
echo "crossplane: $CROSSPLANE"
