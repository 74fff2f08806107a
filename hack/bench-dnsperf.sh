#!/usr/bin/env bash
# Query throughput: dnsperf against one rendered pod (the real agent
# running named from the rendered config) and a minimal hand-written named.conf
# serving the same zone file, same BIND, same run, named pinned to 1 and to 2
# cores; for BIND 9.20 and 9.18. Cases: a plain zone, 3 views, an RPZ, a signed zone
# (test/multipod/dnsperf_test.go). Root, after `make tools build`; dnsperf
# from Debian (hack/install-bind.sh installs it). Figures go to BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
for rel in 9.20 9.18; do
  BINDFN_DNSPERF=1 BINDFN_BIND=$rel go test -count=1 -timeout 30m -v -run '^TestDnsperf$' ./test/multipod/ |
    grep -E 'dnsperf_test.go:[0-9]+: (plain|3-views|rpz|signed) ' | sed 's/^ *dnsperf_test.go:[0-9]*: //'
done
