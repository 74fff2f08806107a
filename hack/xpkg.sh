#!/usr/bin/env bash
# Builds bind-fn's Crossplane packages for one version, without a Docker
# engine (`make xpkg` runs it; test/k8s/cluster runs it for two versions and
# installs them with Crossplane's package manager):
#
#   hack/xpkg.sh OUT [VERSION]      VERSION defaults to $IMAGE_TAG, else dev
#
# writes OUT/images/function-bind.tar (the runtime image, tagged
# $IMAGE_REPO/function-bind:VERSION), OUT/function-bind.xpkg (that image
# embedded: the package is the runtime image plus the package layer),
# OUT/configuration-bind.xpkg (v2 XRD + Composition) and
# OUT/configuration-bind-claim.xpkg (legacy XRD + claim). function-bind is
# built with the build ID function-bind-VERSION, so two versions of the same
# source are two images (two digests, two package revisions). Prints the
# function package's path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: hack/xpkg.sh OUT [VERSION]}
version=${2:-${IMAGE_TAG:-dev}}
repo=${IMAGE_REPO:-git.unkin.net/unkin/bind-fn}
bin="$root/bin"
image=${IMAGE_TOOL:-$bin/image}
for t in "$bin/crossplane" "$image"; do
  [ -x "$t" ] || { echo "xpkg: $t is missing: run 'make tools' (bin/crossplane) and 'go build -o bin/image ./hack/image'" >&2; exit 1; }
done
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-0}
mkdir -p "$out/images"
out=$(cd "$out" && pwd)
(cd "$root" && CGO_ENABLED=0 go build -trimpath -buildvcs=false \
  -ldflags "-s -w -buildid=function-bind-$version" -o "$out/images/function-bind" ./composition)
"$image" -o "$out/images/function-bind.tar" -tag "$repo/function-bind:$version" \
  -bin "$out/images/function-bind" -path-in-image /function-bind -entrypoint /function-bind >/dev/null
rm -f "$out/images/function-bind"
# A package's examples are its Crossplane examples only (the CLI's default,
# ./examples, would put every example of the repository in each package,
# the bad ones and the kustomize configs included).
cd "$root"
"$bin/crossplane" xpkg build --package-root=package/function --examples-root=examples/crossplane \
  --embed-runtime-image-tarball="$out/images/function-bind.tar" -o "$out/function-bind.xpkg"
"$bin/crossplane" xpkg build --package-root=package/configuration --examples-root=examples/crossplane \
  -o "$out/configuration-bind.xpkg"
"$bin/crossplane" xpkg build --package-root=package/configuration-claim --examples-root=examples/crossplane/claim \
  -o "$out/configuration-bind-claim.xpkg"
echo "$out/function-bind.xpkg"
