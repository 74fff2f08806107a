#!/usr/bin/env bash
# Builds a bind-fn release without a Docker engine: every image the product runs, for
# linux/amd64 and linux/arm64, as OCI layouts (one image index each), reproducibly, with a
# CycloneDX SBOM each, and the list of their digests. `make release` runs it.
#
#   hack/release.sh OUT VERSION
#
# OUT/images/<name>/      OCI layout of each image (hack/image; the BIND image by hack/bind-image.sh):
#                         bind9, bind-fn-agent, fn-render, fn-validate, function-bind-runtime,
#                         function-bind (the Crossplane package: the runtime image plus the
#                         package layer, one xpkg per architecture in one index)
# OUT/sbom/<name>.cdx.json  CycloneDX: cyclonedx-gomod for the Go binaries, hack/debsbom for BIND
# OUT/images.yaml         the release's references, tag@sha256:digest (release/images.yaml's format)
# OUT/src/                the tree the release was built from: this checkout's files with
#                         release/images.yaml and what hack/gen-images writes from it, so
#                         fn-render, fn-validate and function-bind name the agent and BIND
#                         images by digest
#
# The checkout itself is not touched; `make release` copies OUT/src's generated files back
# (PIN=1) for the release commit. Labels: org.opencontainers.image.licenses=Apache-2.0,
# .source ($IMAGE_SOURCE), .version (VERSION), .revision ($REVISION, default the checkout's
# HEAD). The same tree, VERSION and REVISION give the same digests (test/release checks it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: hack/release.sh OUT VERSION}
version=${2:?usage: hack/release.sh OUT VERSION}
repo=${IMAGE_REPO:-git.unkin.net/unkin/bind-fn}
source=${IMAGE_SOURCE:-https://git.unkin.net/unkin/bind-fn}
revision=${REVISION:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
archs=(${RELEASE_ARCHS:-amd64 arm64})
bin="$root/bin"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-0} CGO_ENABLED=0 GOFLAGS=${GOFLAGS:--buildvcs=false}
for t in crossplane cyclonedx; do
  [ -x "$bin/$t" ] || { echo "release: bin/$t is missing: run 'make tools' (hack/install-tools.sh $t)" >&2; exit 1; }
done
mkdir -p "$out"; out=$(cd "$out" && pwd)
rm -rf "$out/images" "$out/sbom" "$out/bin" "$out/src" "$out/xpkg"
mkdir -p "$out/images" "$out/sbom" "$out/bin" "$out/xpkg"
image="$out/bin/image"
(cd "$root" && go build -o "$image" ./hack/image)
labels=(-label org.opencontainers.image.licenses=Apache-2.0 -label "org.opencontainers.image.source=$source"
        -label "org.opencontainers.image.version=$version" -label "org.opencontainers.image.revision=$revision")
archlist=$(IFS=,; echo "${archs[*]}")

# The source: this checkout's files (tracked and untracked, not ignored).
src="$out/src"; mkdir -p "$src"
(cd "$root" && git ls-files -z -c -o --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -xf - -C "$src"

declare -A ref
# gobin NAME PKG: the binary for every architecture, from the source tree.
# Stamped as `make build VERSION=... REVISION=...` stamps them (internal/version).
gobin() {
  local a ld="-s -w -X git.unkin.net/unkin/bind-fn/internal/version.version=$version -X git.unkin.net/unkin/bind-fn/internal/version.revision=$revision"
  [ "$1" = function-bind ] && ld="$ld -buildid=function-bind-$version" # as hack/xpkg.sh: a version is an image
  for a in "${archs[@]}"; do
    (cd "$src" && GOOS=linux GOARCH=$a go build -trimpath -ldflags "$ld" -o "$out/bin/$a/$1" "$2")
  done
}
# goimage NAME BINARY ARGS...: the OCI layout of a one-binary image tagged $repo/NAME:VERSION,
# its reference by digest recorded, its SBOM from the first architecture's binary (the module
# list is the same for every architecture); deterministic: no serial number, no timestamp.
goimage() {
  local n=$1 b=$2 tag="$repo/$1:$version" d; shift 2
  d=$("$image" -arch "$archlist" -bin "$out/bin/{arch}/$b" -path-in-image "/$b" -entrypoint "/$b" -tag "$tag" \
    -layout "$out/images/$n" "${labels[@]}" "$@" | cut -d' ' -f3)
  ref[$n]="$tag@$d"
  "$bin/cyclonedx" bin -json -std -noserial -notimestamp -version "$version" \
    -output "$out/sbom/$n.cdx.json" "$out/bin/${archs[0]}/$b"
}

# 1. The images nothing else names: the agent and BIND.
gobin bind-fn-agent ./agent
goimage bind-fn-agent bind-fn-agent -cmd 'copy-self /bind-fn/bin/bind-fn-agent'
bindtag="$repo/bind9:$(bash "$src/hack/bind-image.sh" --tag)"
d=$(BINDFN_BIND920_ROOT=${BINDFN_BIND920_ROOT:-$bin/bind-9.20} BIND_ARCHS="${archs[*]}" IMAGE_TOOL="$image" \
  bash "$src/hack/bind-image.sh" --layout "$out/images/bind9" "$bindtag" -- "${labels[@]}" | cut -d' ' -f3)
ref[bind9]="$bindtag@$d"
mv "$out/images/bind9.deb.json" "$out/sbom/bind9.cdx.json"

# 2. The render's defaults name them by digest: release/images.yaml in the source tree.
writeyaml() {
  {
    sed -n '/^#/p' "$root/release/images.yaml"
    echo "version: $version"
    echo "revision: \"$revision\""
    echo "images:"
    for n in bind9 bind-fn-agent fn-render fn-validate function-bind; do echo "  $n: ${ref[$n]:-$repo/$n:$version}"; done
  } >"$1"
}
writeyaml "$src/release/images.yaml"
(cd "$src" && go run ./hack/gen-images)

# 3. The functions, compiled with those defaults, and function-bind's package.
gobin fn-render ./fn-render
gobin fn-validate ./fn-validate
gobin function-bind ./composition
goimage fn-render fn-render
goimage fn-validate fn-validate
goimage function-bind-runtime function-bind
froms=()
for a in "${archs[@]}"; do
  "$image" -arch "$a" -bin "$out/bin/$a/function-bind" -path-in-image /function-bind -entrypoint /function-bind \
    -tag "$repo/function-bind:$version" -o "$out/xpkg/runtime-$a.tar" >/dev/null # as hack/xpkg.sh embeds it
  (cd "$src" && "$bin/crossplane" xpkg build --package-root=package/function --examples-root=examples/crossplane \
    --embed-runtime-image-tarball="$out/xpkg/runtime-$a.tar" -o "$out/xpkg/function-bind-$a.xpkg")
  froms+=(-from "$out/xpkg/function-bind-$a.xpkg")
done
d=$("$image" "${froms[@]}" -tag "$repo/function-bind:$version" -layout "$out/images/function-bind" "${labels[@]}" | cut -d' ' -f3)
ref[function-bind]="$repo/function-bind:$version@$d"
cp "$out/sbom/function-bind-runtime.cdx.json" "$out/sbom/function-bind.cdx.json"

# 4. Every reference by digest: the source tree's examples and OUT/images.yaml.
writeyaml "$src/release/images.yaml"
(cd "$src" && go run ./hack/gen-images)
cp "$src/release/images.yaml" "$out/images.yaml"
rm -rf "$out/xpkg"
cat "$out/images.yaml"
