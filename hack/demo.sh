#!/usr/bin/env bash
# One-command local demo: start examples/authoritative as real named
# processes under the bind-fn agent (each pod its own network and mount
# namespace, inside a private lab network: nothing leaves the machine) and
# query it with dig. Needs root, Debian's bind9 tools, iproute2, util-linux.
#   make demo        (builds bin/bind-fn-agent first)
# Each lab names its network namespaces l<pid>-<random>-<pod> (test/multipod/lab_test.go):
# /run/netns is shared by the machine, so the demo runs beside `make test`
# (TestLabsSideBySide runs two at once).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "demo: needs root (network and mount namespaces)" >&2; exit 1; }
BINDFN_DEMO=1 exec go test -count=1 -run '^TestDemo$' -v ./test/multipod 2>&1 |
  grep -v -E '^(=== RUN|--- (PASS|SKIP)|PASS$|ok )'
