#!/usr/bin/env bash
# Builds the real external-dns (sigs.k8s.io/external-dns, one pinned version)
# for the multi-pod lab's client test, into the tools cache, and prints the
# cached binary's path. Usage: hack/build-external-dns.sh [--print-key]
#
# Why a script and not tools/<name>/go.mod like the other CLIs:
#   - its go.mod needs Go 1.27: this build alone runs with GOTOOLCHAIN=$EXTERNAL_DNS_GO
#     (the go command fetches that toolchain from the module proxy);
#   - the module proxy refuses three of its modules (github.com/civo/civogo,
#     github.com/exoscale/egoscale/v3, github.com/openshift/api). Their only importers
#     are the civo and exoscale providers and the OpenShift route source, so the
#     script copies the module, removes exactly those (and the module's own tests,
#     which are not built), runs go mod tidy and builds main.go. Every edit is checked:
#     a pattern that does not match exactly once stops the build.
# The build is cached under $BINDFN_TOOLS_CACHE/external-dns-<version>-<key>, the
# key hashing this script, the version, the toolchain and GOOS/GOARCH.
set -euo pipefail

EXTERNAL_DNS_VERSION=${EXTERNAL_DNS_VERSION:-v0.23.0}
EXTERNAL_DNS_GO=${EXTERNAL_DNS_GO:-go1.27.3}
mod=sigs.k8s.io/external-dns

here=$(cd "$(dirname "$0")" && pwd)
cache="${BINDFN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bind-fn-tools}"
mkdir -p "$cache"
command -v go >/dev/null 2>&1 || { echo "build-external-dns: go is not in PATH" >&2; exit 1; }

goos=$(GOTOOLCHAIN=local go env GOOS) goarch=$(GOTOOLCHAIN=local go env GOARCH)
key=$( { cat "$here/build-external-dns.sh"; echo "$EXTERNAL_DNS_VERSION $EXTERNAL_DNS_GO $goos $goarch"; } | sha256sum | cut -c1-16)
out="$cache/external-dns-$EXTERNAL_DNS_VERSION-$key"
if [ "${1:-}" = "--print-key" ]; then echo "$EXTERNAL_DNS_VERSION-$key"; exit 0; fi
if [ -x "$out" ]; then echo "$out"; exit 0; fi

export GOTOOLCHAIN=$EXTERNAL_DNS_GO GOFLAGS=-mod=mod
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
start=$(date +%s)
echo "build-external-dns: building $mod@$EXTERNAL_DNS_VERSION with $EXTERNAL_DNS_GO (cache $out)" >&2

# The module's source, from the proxy (verified against sum.golang.org).
# A throwaway module, so the download sees go 1.27 and no other requirement.
(cd "$work" && go mod init dl >/dev/null 2>&1 && go mod edit -go=1.27.0)
srcdir=$(cd "$work" && go mod download -json "$mod@$EXTERNAL_DNS_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$srcdir" ] && [ -f "$srcdir/go.mod" ] || { echo "build-external-dns: download of $mod@$EXTERNAL_DNS_VERSION failed" >&2; exit 1; }
src="$work/external-dns"
cp -r "$srcdir" "$src"
chmod -R u+w "$src"
cd "$src"

# drop FILE PERL-REGEX: delete the (multi-line) match, which must occur exactly once.
drop() {
  local file=$1 re=$2 n
  n=$(perl -0777 -ne "\$n = () = /$re/gms; print \$n" "$file")
  if [ "$n" != 1 ]; then
    echo "build-external-dns: $file: pattern matched $n times, want 1: $re" >&2
    exit 1
  fi
  perl -0777 -i -pe "s/$re//ms" "$file"
}

# 1. The civo and exoscale providers.
rm -r provider/civo provider/exoscale
drop provider/factory/provider.go '^\t"sigs\.k8s\.io\/external-dns\/provider\/civo"\n'
drop provider/factory/provider.go '^\t"sigs\.k8s\.io\/external-dns\/provider\/exoscale"\n'
drop provider/factory/provider.go '^\t\texternaldns\.ProviderCivo: +civo\.New,\n'
drop provider/factory/provider.go '^\t\texternaldns\.ProviderExoscale: +exoscale\.New,\n'

# 2. The OpenShift route source and its client.
rm source/openshift_route.go
drop source/store.go '^\topenshift "github\.com\/openshift\/client-go\/route\/clientset\/versioned"\n'
drop source/store.go '^\tOpenShiftClient\(\) \(openshift\.Interface, error\)\n'
drop source/store.go '^\topenshiftClient +openshift\.Interface\n'
drop source/store.go '^\topenshiftClientErr +error\n'
drop source/store.go '^\topenshiftOnce +sync\.Once\n'
drop source/store.go '^\/\/ OpenShiftClient generates.*?\n}\n\n'
drop source/store.go '^\tcase types\.OpenShiftRoute:\n\t\treturn buildOpenShiftRouteSource\(ctx, p, cfg\)\n'
drop source/store.go '^func buildOpenShiftRouteSource\(.*?\n}\n\n'

# 3. Only the providers a test here runs: rfc2136 (the lab's client test) and
#    inmemory, with webhook and aws, which other packages import (the docs
#    generator, the dynamodb registry). The rest are cloud SDKs nobody here calls:
#    compiling them was most of this build. The controller, plan, registries,
#    sources and the rfc2136 provider are external-dns's own code, unchanged.
for p in alibabacloud awssd azure cloudflare coredns dnsimple godaddy google linode ns1 oci ovh pdns pihole scaleway; do
  rm -r "provider/$p"
  drop provider/factory/provider.go '^\t"sigs\.k8s\.io\/external-dns\/provider\/'"$p"'"\n'
  perl -0777 -i -pe 's/^\t\texternaldns\.Provider\w+: +'"$p"'\.New\w*,\n//gm' provider/factory/provider.go
done
if grep -nE '^\t\texternaldns\.Provider' provider/factory/provider.go | grep -vE ': +(rfc2136|inmemory|webhook|aws)\.New' >&2; then
  echo "build-external-dns: the providers above were not removed" >&2
  exit 1
fi

# 4. The module's tests (not part of the binary; some use what 1-2 removed).
find . -name '*_test.go' -delete
rm -r tests internal/testutils e2e 2>/dev/null || true

if grep -rlE 'civogo|egoscale|openshift/(api|client-go)' --include='*.go' . >&2; then
  echo "build-external-dns: the files above still import a refused module" >&2
  exit 1
fi
# Removed struct fields and map entries change the column alignment: re-format.
gofmt -w provider/factory/provider.go source/store.go

# The requirements go with their importers (tidy would otherwise still read
# the refused modules' go.mod files), then tidy settles the rest.
go mod edit -droprequire=github.com/civo/civogo -droprequire=github.com/exoscale/egoscale/v3 \
  -droprequire=github.com/openshift/api -droprequire=github.com/openshift/client-go
go mod tidy
CGO_ENABLED=0 go build -trimpath -o "$out.tmp.$$" \
  -ldflags "-s -w -X sigs.k8s.io/external-dns/pkg/apis/externaldns.Version=$EXTERNAL_DNS_VERSION" .
mv -f "$out.tmp.$$" "$out"
echo "build-external-dns: built in $(( $(date +%s) - start ))s" >&2
echo "$out"
