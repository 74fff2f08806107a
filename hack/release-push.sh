#!/usr/bin/env bash
# Pushes a release built by hack/release.sh to a registry, signs every image by digest
# with a cosign key pair and attaches its SBOM as a signed CycloneDX attestation:
#
#   hack/release-push.sh OUT REGISTRY KEY      REGISTRY e.g. registry.example/bind-fn; KEY cosign.key
#
# For each OUT/images/<name>: hack/push copies the index to REGISTRY/<name>:<its tag> and prints
# it by digest; `cosign sign` signs that digest (the index and, --recursive, each platform's
# image); `cosign attest --type cyclonedx` attaches OUT/sbom/<name>.cdx.json, signed. Writes
# OUT/pushed.txt: "<name> <reference@digest>" lines, what `cosign verify` checks.
# COSIGN_PASSWORD is the key's password; COSIGN_FLAGS are extra flags for both commands
# (the tests: --allow-http-registry for their loopback registry); transparency-log upload
# is off unless COSIGN_TLOG=true (no network here; a public release may turn it on).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: hack/release-push.sh OUT REGISTRY KEY}
registry=${2:?usage: hack/release-push.sh OUT REGISTRY KEY}
key=${3:?usage: hack/release-push.sh OUT REGISTRY KEY}
cosign=${COSIGN:-$root/bin/cosign}
[ -x "$cosign" ] || { echo "release-push: $cosign is missing: run 'make tools' (hack/install-tools.sh cosign)" >&2; exit 1; }
version=$(sed -n 's/^version: //p' "$out/images.yaml")
[ -n "$version" ] || { echo "release-push: no version in $out/images.yaml: run make release first" >&2; exit 1; }
push="$out/bin/push"; (cd "$root" && go build -o "$push" ./hack/push)
flags=(--key "$key" --tlog-upload="${COSIGN_TLOG:-false}" --yes ${COSIGN_FLAGS:-})
: >"$out/pushed.txt.tmp"
for dir in "$out"/images/*/; do
  name=$(basename "$dir")
  ref=$("$push" -layout "$dir" -to "$registry/$name") # the tag the release gave it (bind9: its Debian version)
  "$cosign" sign "${flags[@]}" --recursive "$ref" >&2
  "$cosign" attest "${flags[@]}" --type cyclonedx --predicate "$out/sbom/$name.cdx.json" "$ref" >&2
  echo "$name $ref" >>"$out/pushed.txt.tmp"
done
mv "$out/pushed.txt.tmp" "$out/pushed.txt"
cat "$out/pushed.txt"
