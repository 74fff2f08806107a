#!/usr/bin/env bash
# Builds the pinned control-plane components the Kubernetes tests run (test/k8s)
# into bin/, cached like hack/install-tools.sh: the key of a set is a hash of its
# tools/<dir>/go.mod and go.sum, the packages, the build flags and the Go version;
# builds are kept in $BINDFN_TOOLS_CACHE (default ~/.cache/bind-fn-tools) under
# that key, so a fresh clone copies them in seconds.
#
#   hack/install-k8s.sh          etcd, kube-apiserver, crossplane core (make test)
#   hack/install-k8s.sh --node   also kube-controller-manager, kube-scheduler,
#                                kubelet, kube-proxy, kubectl, CoreDNS and kube-router,
#                                the NetworkPolicy enforcer (make k8s-cluster)
#
# Versions: tools/etcd (etcd v3.6.5), tools/kubernetes (k8s.io/kubernetes
# v1.34.2, staging modules replaced by the published v0.34.2), tools/crossplane-core
# (Crossplane v2.1.0), tools/coredns, tools/kube-router (kube-router v2.1.0, its
# network policy controller only: iptables + ipset; SIG Network's
# kube-network-policies needs nftables' queue expression, CONFIG_NFT_QUEUE, which
# this kernel lacks). One big build at a time (2 shared cores).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
cache="${BINDFN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bind-fn-tools}"
mkdir -p "$bin" "$cache"
export GOFLAGS="${GOFLAGS:--buildvcs=false}" CGO_ENABLED=0

node=false
case "${1:-}" in
  --node) node=true ;;
  "") ;;
  *) echo "usage: $0 [--node]" >&2; exit 2 ;;
esac

goversion=$(go env GOVERSION GOOS GOARCH | tr '\n' ' ')

# build_set DIR LDFLAGS NAME=PACKAGE...: builds every package in one go build
# (they share most of their code) and installs each as bin/NAME.
build_set() {
  local dir=$1 ldflags=$2; shift 2
  local mod="$root/tools/$dir" key names=() pkgs=() p
  for p in "$@"; do names+=("${p%%=*}"); pkgs+=("${p#*=}"); done
  key=$( { cat "$mod/go.mod" "$mod/go.sum"; echo "$* -trimpath $ldflags CGO_ENABLED=0 $goversion"; } | sha256sum | cut -c1-32)
  local fresh=true n
  for n in "${names[@]}"; do
    if [ ! -x "$bin/$n" ] || [ "$(cat "$bin/.$n.key" 2>/dev/null)" != "$key" ]; then fresh=false; fi
  done
  $fresh && return 0
  local cached="$cache/$dir-$key"
  if [ -d "$cached" ]; then
    echo "install-k8s: ${names[*]} from cache" >&2
  else
    echo "install-k8s: building ${names[*]} (cache $cached)" >&2
    local tmp="$cached.tmp.$$" start=$SECONDS
    rm -rf "$tmp"; mkdir -p "$tmp"
    (cd "$mod" && go build -trimpath -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}")
    # go build -o DIR/ names each binary after its package's directory.
    for p in "$@"; do
      local want=${p%%=*} got; got=$(basename "${p#*=}"); [ "$got" = . ] && got=$dir
      [ "$want" = "$got" ] || mv "$tmp/$got" "$tmp/$want"
    done
    mv "$tmp" "$cached"
    echo "install-k8s: built ${names[*]} in $((SECONDS - start)) s" >&2
  fi
  for n in "${names[@]}"; do
    cp -f "$cached/$n" "$bin/$n.tmp.$$"
    mv -f "$bin/$n.tmp.$$" "$bin/$n"
    echo "$key" >"$bin/.$n.key"
  done
}

k8s_version=v1.34.2
k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34 -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=34"

build_set etcd "-s -w" etcd=.
build_set kubernetes "$k8s_ldflags" kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver
build_set crossplane-core "-s -w -X github.com/crossplane/crossplane/v2/internal/version.version=v2.1.0" \
  crossplane-core=github.com/crossplane/crossplane/v2/cmd/crossplane

if $node; then
  # The node's runtime comes from Debian: containerd, runc, the CNI plugins,
  # iptables for kube-proxy (installed when missing, as install-tools does
  # for BIND).
  # ipset for kube-router's network policy controller.
  if ! command -v containerd >/dev/null || ! command -v runc >/dev/null || [ ! -x /usr/lib/cni/bridge ] || ! command -v iptables >/dev/null || ! command -v ipset >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "install-k8s: as root run: apt-get install -y containerd runc containernetworking-plugins iptables ipset" >&2
      exit 1
    fi
    echo "install-k8s: installing Debian's containerd runc containernetworking-plugins iptables ipset" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      containerd runc containernetworking-plugins iptables ipset >/dev/null
  fi
  build_set kubernetes "$k8s_ldflags" \
    kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager \
    kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler \
    kubelet=k8s.io/kubernetes/cmd/kubelet \
    kube-proxy=k8s.io/kubernetes/cmd/kube-proxy \
    kubectl=k8s.io/kubernetes/cmd/kubectl
  build_set coredns "-s -w" coredns=.
  build_set kube-router "-s -w" \
    kube-router=github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
fi
