#!/usr/bin/env bash
# named-rss.sh [RECORDS...]: the resident memory of BIND 9.20's named (the root
# bin/bind-9.20, or $BINDFN_BIND920_ROOT) serving one zone of RECORDS A
# records (default 0 50000 200000), once all zones are loaded, for 2, 16 and
# 64 worker threads (named -n: named starts one per CPU of the node). Prints
# one line per run. The numbers behind model.BaseMemory and
# model.RecordMemory (docs/resources.md, BENCHMARKS.md). Root: it binds the
# root's /usr over /usr in a private mount namespace, as the tests do.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bind=$(readlink -f "${BINDFN_BIND920_ROOT:-$root/bin/bind-9.20}")
[ -x "$bind/usr/sbin/named" ] || { echo "named-rss: no BIND 9.20 root at $bind: run make tools" >&2; exit 1; }
[ $# -gt 0 ] || set -- 0 50000 200000
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
port=$((20000 + RANDOM % 20000))
for n in "$@"; do
  awk -v n="$n" 'BEGIN {
    print "$TTL 300"; print "@ IN SOA ns hostmaster 1 300 60 1209600 60"; print "@ IN NS ns"; print "ns IN A 192.0.2.53"
    for (i = 0; i < n; i++) printf "host-%d IN A 198.51.%d.%d\n", i, int(i / 256) % 256, i % 256
  }' >"$dir/$n.zone"
  cat >"$dir/$n.conf" <<EOF
options { directory "$dir"; pid-file none; listen-on port $port { 127.0.0.1; }; listen-on-v6 { none; }; recursion no; };
zone "example.test" { type primary; file "$dir/$n.zone"; };
EOF
  for threads in 2 16 64; do
    log="$dir/$n-$threads.log"
    unshare -m --propagation private -- /bin/sh -c 'mount --bind -o ro "$0/usr" /usr; exec /usr/sbin/named -g -n "$1" -c "$2"' \
      "$bind" "$threads" "$dir/$n.conf" >"$log" 2>&1 &
    pid=$!
    # Bounded wait for the load (a hang, not a timing).
    for _ in $(seq 1 3000); do
      grep -q "all zones loaded" "$log" && break
      kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
      sleep 0.1
    done
    grep -q "all zones loaded" "$log" || { echo "named-rss: $n records: not loaded" >&2; cat "$log" >&2; exit 1; }
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
    printf 'records %7d  threads %2d  VmRSS %6d KiB\n' "$n" "$threads" "$rss"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
