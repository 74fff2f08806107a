#!/usr/bin/env bash
# Builds the BIND image bind-fn ships: BIND 9.20 from Debian trixie's packages, the same root
# every test runs (hack/install-bind.sh, bin/bind-9.20). No Docker engine: bin/image writes a
# reproducible single-layer image (fixed timestamps, sorted entries), run as the non-root user
# 53 (Debian's bind), holding what the pod runs — named, rndc, named-checkconf, named-checkzone, dig —
# and every shared library they load (hack/elfdeps: read from the ELF headers inside the root,
# so a root of another architecture works too), with the root's ld.so.cache when it has one.
#
#   hack/bind-image.sh OUT.tar [TAG]             this machine's architecture, a docker-archive tarball
#   hack/bind-image.sh --layout DIR [TAG] [-- IMAGE-FLAGS...]
#                                                an OCI layout: one index, an image per $BIND_ARCHS
#                                                (default "amd64 arm64"); IMAGE-FLAGS go to bin/image
#                                                (make release: -label ...); also writes DIR.deb.json,
#                                                the image's Debian packages (hack/debsbom, CycloneDX)
#   hack/bind-image.sh --tag                     prints the default tag's version part (9.20.30-1-deb13u1)
# TAG defaults to $IMAGE_REPO/bind9:<tag of tools/bind9.20/version>.
#
# The amd64 root is bin/bind-9.20 (make tools). Other architectures' roots are unpacked, not
# installed: mmdebstrap --variant=extract runs no maintainer script, so no arm64 binary runs and
# no qemu is needed (the loader finds the libraries on its built-in multiarch path; there is no
# ld.so.cache). They are cached by version in $BINDFN_TOOLS_CACHE (~/.cache/bind-fn-tools).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ver=$(tr -d '[:space:]' <"$root/tools/bind9.20/version")
tagver=${ver#*:}; tagver=${tagver//\~/-}
if [ "${1:-}" = "--tag" ]; then echo "$tagver"; exit 0; fi
layout=
if [ "${1:-}" = "--layout" ]; then layout=${2:?usage: hack/bind-image.sh --layout DIR [TAG]}; shift 2; out=$layout
else out=${1:?usage: hack/bind-image.sh OUT.tar [TAG]}; shift; fi
tag=${IMAGE_REPO:-git.unkin.net/unkin/bind-fn}/bind9:$tagver
if [ $# -gt 0 ] && [ "$1" != "--" ]; then tag=$1; shift; fi
[ "${1:-}" = "--" ] && shift
extra=("$@")
cache="${BINDFN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bind-fn-tools}"
img=${IMAGE_TOOL:-$root/bin/image}
[ -x "$img" ] || (cd "$root" && go build -o "$img" ./hack/image)
elfdeps="$root/bin/elfdeps"; (cd "$root" && go build -o "$elfdeps" ./hack/elfdeps)
debsbom="$root/bin/debsbom"; (cd "$root" && go build -o "$debsbom" ./hack/debsbom)
hostarch=$(go env GOARCH)

# rootfs ARCH: prints the root of ARCH, unpacking it first if it is missing; its dpkg
# database (the real one, or the one written for the unpacked packages) is ROOT's
# admindir (admindir ARCH).
rootfs() {
  if [ "$1" = amd64 ]; then
    readlink -f "${BINDFN_BIND920_ROOT:-$root/bin/bind-9.20}"; return
  fi
  local r="$cache/bind-9.20-$1-$tagver"
  if [ ! -x "$r/usr/sbin/named" ]; then
    echo "bind-image: unpacking Debian trixie's bind9 $ver for $1 into $r (mmdebstrap --variant=extract)" >&2
    rm -rf "$r.tmp"
    mmdebstrap --quiet --arch="$1" --variant=extract --skip=cleanup/apt/cache \
      --include="bind9=$ver,bind9-utils=$ver,bind9-dnsutils=$ver" trixie "$r.tmp" >&2
    # A dpkg database for the unpacked packages (nothing is installed, so dpkg
    # keeps none): status and the .list of every package, for the SBOM.
    local adm="$r.tmp/var/lib/bind-fn/dpkg" d p
    mkdir -p "$adm/info"; : >"$adm/status"
    for d in "$r.tmp"/var/cache/apt/archives/*.deb; do
      p=$(dpkg-deb -f "$d" Package)
      { dpkg-deb -f "$d" Package Version Architecture Maintainer Description; echo "Status: install ok unpacked"; echo; } >>"$adm/status"
      dpkg-deb --fsys-tarfile "$d" | tar -t | sed -e 's#^\./#/#' -e 's#/$##' | { grep -v '^/*$' || true; } >"$adm/info/$p.list"
    done
    rm -rf "$r.tmp"/var/cache/apt/archives/*.deb
    mv "$r.tmp" "$r"
  fi
  echo "$r"
}
admindir() { if [ -d "$1/var/lib/bind-fn/dpkg" ]; then echo "$1/var/lib/bind-fn/dpkg"; else echo "$1/var/lib/dpkg"; fi; }

progs=(/usr/sbin/named /usr/sbin/rndc /usr/bin/named-checkconf /usr/bin/named-checkzone /usr/bin/dig)
# stage ARCH DIR: copies what the image holds from ARCH's root into DIR (its paths in the image).
stage() {
  local r; r=$(rootfs "$1")
  [ -x "$r/usr/sbin/named" ] || { echo "bind-image: no BIND 9.20 root at $r: run 'make tools' (hack/install-bind.sh)" >&2; exit 1; }
  local got; got=$(dpkg-query --admindir="$(admindir "$r")" -W -f '${Version}' bind9)
  [ "$got" = "$ver" ] || { echo "bind-image: the $1 root holds bind9 $got, tools/bind9.20/version wants $ver" >&2; exit 1; }
  local p f
  put() { mkdir -p "$(dirname "$2")"; cp --preserve=mode "$1" "$2"; }
  for p in "${progs[@]}"; do put "$r$p" "$2$p"; done
  while IFS=$'\t' read -r p f; do put "$f" "$2$p"; done < <("$elfdeps" -root "$r" "${progs[@]}")
  if [ -f "$r/etc/ld.so.cache" ]; then put "$r/etc/ld.so.cache" "$2/etc/ld.so.cache"; fi
  # The files' packages, for the SBOM: each file as the root's dpkg database names it.
  { for p in "${progs[@]}"; do echo "$p"; done
    "$elfdeps" -root "$r" "${progs[@]}" | cut -f2 | sed "s#^$r##"
  } | "$debsbom" -admindir "$(admindir "$r")" -files - -o "$2.deb.json" -name "${tag%:*}" -version "$tagver"
}

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
args=(-tree "$work/{arch}" -path-in-image /usr/sbin/named -entrypoint /usr/sbin/named -tag "$tag"
      -user 53:53 -env PATH=/usr/sbin:/usr/bin:/sbin:/bin)
mkdir -p "$(dirname "$out")"
if [ -z "$layout" ]; then
  stage "$hostarch" "$work/$hostarch"
  "$img" "${args[@]}" -arch "$hostarch" -o "$out"
  exit 0
fi
archs=(${BIND_ARCHS:-amd64 arm64})
for a in "${archs[@]}"; do stage "$a" "$work/$a"; done
"$debsbom" -merge -o "$layout.deb.json" $(for a in "${archs[@]}"; do echo "$work/$a.deb.json"; done)
"$img" "${args[@]}" -arch "$(IFS=,; echo "${archs[*]}")" -layout "$layout" "${extra[@]}"
