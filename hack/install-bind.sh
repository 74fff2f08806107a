#!/usr/bin/env bash
# Installs the two BIND releases the tests run (and dnsperf, for the throughput benchmark;
# prometheus and promtool, for the alert rules):
#   - BIND 9.18 from this machine's Debian (bookworm) packages, when named is missing;
#   - BIND 9.20, the version bind-fn ships, as a Debian trixie root built by mmdebstrap
#     (tools/bind9.20/version pins the packages), cached in $BINDFN_TOOLS_CACHE under a key of
#     the pin and linked as bin/bind-9.20. See tools/bind9.20/README.md.
# Needs root for apt-get and mmdebstrap; idempotent (a cached root is linked in a second).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
cache="${BINDFN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bind-fn-tools}"
mkdir -p "$bin" "$cache"

apt_install() { # packages...
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-bind: need root to install $*: apt-get update && apt-get install -y $*" >&2
    exit 1
  fi
  echo "install-bind: installing Debian packages: $*" >&2
  # apt's lock may be held by a concurrent apt (unattended jobs): wait for it, bounded.
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "$@" >/dev/null
}

# have CMD: CMD is in PATH or in an sbin directory a non-login root PATH may lack.
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }

need=()
for c in named named-checkconf named-checkzone rndc nsupdate dig ip unshare; do
  have "$c" || need+=("$c")
done
[ ${#need[@]} -eq 0 ] || apt_install bind9 bind9-utils bind9-dnsutils iproute2 util-linux
have mmdebstrap || apt_install mmdebstrap
# dnsperf: the query-throughput benchmark (hack/bench-dnsperf.sh, BENCHMARKS.md).
have dnsperf || apt_install dnsperf
# iptables: the multi-pod lab drops and rejects packets inside its namespaces
# (TestLab/3-notify-tcp-retry, TestSecondariesBeforePrimaryService). A fresh
# machine has none; before, only install-k8s.sh --node installed it, after the lab ran.
have iptables || apt_install iptables
# zsh: bind-fn completion zsh is sourced by a real zsh (cmd/bind-fn TestCompletionZsh).
have zsh || apt_install zsh
# kdig (knot-dnsutils): a second DoT/DoH client beside BIND's dig (test/multipod TestTLSLab).
have kdig || apt_install knot-dnsutils
# prometheus, promtool (Debian's prometheus, 2.42): the alert rules' unit tests
# (promtool test rules, internal/monitoring) and the Prometheus the multi-pod lab
# starts on loopback (test/multipod TestMonitoringLab). Only tests run it: where
# systemd started the package's service, it is stopped and disabled again.
if ! have promtool || ! have prometheus; then
  apt_install prometheus
  if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
    systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
fi

ver=$(tr -d '[:space:]' <"$root/tools/bind9.20/version")
key=$(printf 'trixie %s bind9 bind9-utils bind9-dnsutils\n' "$ver" | sha256sum | cut -c1-16)
dir="$cache/bind-9.20-$key"
if [ ! -x "$dir/root/usr/sbin/named" ] || [ ! -f "$dir/ok" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "install-bind: need root to build the BIND 9.20 root (mmdebstrap)" >&2; exit 1; }
  echo "install-bind: building the BIND $ver root (Debian trixie, mmdebstrap, ~1-3 min) into $dir" >&2
  rm -rf "$dir.tmp.$$"; mkdir -p "$dir.tmp.$$"
  pkgs="bind9=$ver,bind9-utils=$ver,bind9-dnsutils=$ver"
  if ! mmdebstrap --quiet --variant=apt --include="$pkgs" trixie "$dir.tmp.$$/root" >&2; then
    rm -rf "$dir.tmp.$$"
    echo "install-bind: mmdebstrap could not install $pkgs from Debian trixie; if apt says the version" >&2
    echo "install-bind: is not found, Debian has moved on: update tools/bind9.20/version (README there)" >&2
    exit 1
  fi
  got=$(chroot "$dir.tmp.$$/root" dpkg-query -W -f '${Version}' bind9)
  [ "$got" = "$ver" ] || { echo "install-bind: the root holds bind9 $got, want $ver" >&2; exit 1; }
  chroot "$dir.tmp.$$/root" named -V >/dev/null
  echo "$ver" >"$dir.tmp.$$/ok"
  rm -rf "$dir"; mv "$dir.tmp.$$" "$dir"
else
  echo "install-bind: BIND $ver root from cache" >&2
fi
ln -sfn "$dir/root" "$bin/bind-9.20.tmp.$$" && mv -Tf "$bin/bind-9.20.tmp.$$" "$bin/bind-9.20"
