#!/usr/bin/env bash
# Builds the pinned CLIs (tools/<name>/go.mod) into bin/ and installs both BIND releases
# the tests run (hack/install-bind.sh: Debian's 9.18, and the 9.20 root as bin/bind-9.20).
#   hack/install-tools.sh          everything `make test` needs
#   hack/install-tools.sh kpt      only the named tools (`make example` needs kpt alone);
#                                  names: bind kustomize controller-gen crossplane kpt kube-score external-dns
#                                  cosign cyclonedx (make release: signatures and SBOMs)
#                                  sops age-keygen (the kubelet cluster's SOPS recipe)
# Idempotent and cache-friendly:
#   - bin/<name> is kept while its stamp bin/.<name>.key matches the tool's key
#     (a hash of tools/<name>/go.mod, go.sum, the build flags and the Go version);
#   - every build is also kept in $BINDFN_TOOLS_CACHE (default ~/.cache/bind-fn-tools)
#     under its key, so a fresh clone (CI) copies the tools instead of rebuilding them
#     (kpt takes ~4 min, crossplane a few).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
cache="${BINDFN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bind-fn-tools}"
mkdir -p "$bin" "$cache"

only=("$@")
for n in "${only[@]}"; do
  case $n in bind|kustomize|controller-gen|staticcheck|crossplane|kpt|kube-score|external-dns|cosign|cyclonedx|sops|age-keygen|cert-manager) ;;
    *) echo "install-tools: unknown tool $n (bind kustomize controller-gen staticcheck crossplane kpt kube-score external-dns cosign cyclonedx sops age-keygen cert-manager)" >&2; exit 2 ;;
  esac
done
# wanted NAME: no names given (everything), or NAME is one of them.
wanted() { [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }

command -v go >/dev/null 2>&1 || { echo "install-tools: go is not in PATH (want Go 1.26 at /usr/local/go/bin)" >&2; exit 1; }

# BIND 9.18 (Debian's, when named is missing) and the BIND 9.20 root (bin/bind-9.20).
wanted bind && bash "$root/hack/install-bind.sh"

goversion=$(go env GOVERSION GOOS GOARCH | tr '\n' ' ')

build() { # name package [extra go build args...]
  local name=$1 pkg=$2; shift 2
  local dir="$root/tools/$name" stamp="$bin/.$name.key" key
  key=$( { cat "$dir/go.mod" "$dir/go.sum"; echo "$pkg $* -trimpath CGO_ENABLED=0 $goversion"; } | sha256sum | cut -c1-32)
  if [ -x "$bin/$name" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
    return 0
  fi
  local cached="$cache/$name-$key"
  # Adopt a build stamped by the earlier version of this script (a copy of go.sum).
  if [ ! -x "$cached" ] && [ -x "$bin/$name" ] && cmp -s "$bin/.$name.sum" "$dir/go.sum" 2>/dev/null; then
    cp -f "$bin/$name" "$cached"
  fi
  rm -f "$bin/.$name.sum"
  if [ -x "$cached" ]; then
    echo "install-tools: $name from cache" >&2
  else
    echo "install-tools: building $name (cache $cached)" >&2
    # Static and -trimpath, as bin/ and hack/install-k8s.sh build: the standard
    # library and the modules the tools share (crossplane's CLI and core, the
    # Kubernetes libraries) compile once into the build cache, not once per flag set.
    (cd "$dir" && CGO_ENABLED=0 go build -trimpath -o "$cached.tmp.$$" "$@" "$pkg")
    mv -f "$cached.tmp.$$" "$cached"
  fi
  cp -f "$cached" "$bin/$name.tmp.$$"
  mv -f "$bin/$name.tmp.$$" "$bin/$name"
  echo "$key" >"$stamp"
}

# waitall: wait for every background build, failing if any failed.
waitall() {
  local p rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  pids=()
  return $rc
}

# Two cores: the two small tools together, then the two big ones together.
pids=()
wanted kustomize && { build kustomize sigs.k8s.io/kustomize/kustomize/v5 & pids+=($!); }
wanted controller-gen && { build controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen & pids+=($!); }
wanted staticcheck && { build staticcheck honnef.co/go/tools/cmd/staticcheck & pids+=($!); }
# kube-score (TestKubeScore: the rendered examples' objects) is small enough
# to build beside the small tools (~7 min on two busy cores, then cached).
wanted kube-score && { build kube-score github.com/zegl/kube-score/cmd/kube-score & pids+=($!); }
waitall
wanted cyclonedx && { build cyclonedx github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod & pids+=($!); }
waitall
wanted crossplane && { build crossplane github.com/crossplane/crossplane/v2/cmd/crank & pids+=($!); }
wanted kpt && { GONOSUMDB=github.com/GoogleContainerTools/kpt build kpt github.com/GoogleContainerTools/kpt \
  -ldflags "-X github.com/GoogleContainerTools/kpt/run.version=v1.0.0-beta.54" & pids+=($!); }
waitall
# cosign (~5 min cold): signs the release images and their SBOMs, and verifies
# them by digest (make release, test/release). The version is stamped as
# cosign's own release builds do, so `cosign version` names it.
wanted cosign && build cosign github.com/sigstore/cosign/v2/cmd/cosign \
  -ldflags "-X sigs.k8s.io/release-utils/version.gitVersion=v2.6.5"
# sops and age-keygen: test/k8s/cluster TestExternalSecrets runs the SOPS
# recipe of docs/security.md with them (encrypt for an age key, decrypt, apply).
wanted age-keygen && { build age-keygen filippo.io/age/cmd/age-keygen & pids+=($!); }
wanted sops && { build sops github.com/getsops/sops/v3/cmd/sops & pids+=($!); }
waitall
# cert-manager's controller v1.11.5 (~4 min cold; the newest release whose
# cmd/controller the module proxy serves): test/k8s TestCertManagerIssues
# runs it against the control plane's API server (docs/tls.md).
wanted cert-manager && build cert-manager github.com/cert-manager/cert-manager/cmd/controller \
  -ldflags "-X github.com/cert-manager/cert-manager/pkg/util.AppVersion=v1.11.5"

# external-dns (the lab's RFC 2136 client test): its own script, as it needs
# Go 1.27 and a module copy without the providers the proxy cannot serve.
# Cached by version in $cache; bin/.external-dns.key stamps the copy.
if wanted external-dns; then
  edkey=$(bash "$root/hack/build-external-dns.sh" --print-key)
  if ! [ -x "$bin/external-dns" ] || [ "$(cat "$bin/.external-dns.key" 2>/dev/null)" != "$edkey" ]; then
    ed=$(bash "$root/hack/build-external-dns.sh")
    cp -f "$ed" "$bin/external-dns.tmp.$$"
    mv -f "$bin/external-dns.tmp.$$" "$bin/external-dns"
    echo "$edkey" >"$bin/.external-dns.key"
  fi
fi

# Only the named tools were asked for (make example): done. Tools that only
# `make test` needs are installed below this line.
[ ${#only[@]} -eq 0 ] || exit 0

# etcd, kube-apiserver, Crossplane core ... for test/k8s, cached the same way.
bash "$root/hack/install-k8s.sh"
