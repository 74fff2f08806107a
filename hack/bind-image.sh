#!/usr/bin/env bash
# Builds the BIND image bind-fn ships: BIND 9.20 from Debian trixie's packages, the same root
# every test runs (hack/install-bind.sh, bin/bind-9.20). No Docker engine: bin/image writes a
# reproducible single-layer tarball (fixed timestamps, sorted entries), run as the non-root user
# 53 (Debian's bind), holding what the pod runs — named, rndc, named-checkconf, named-checkzone —
# and every shared library they load (ldd inside the root), with the root's ld.so.cache.
#
#   hack/bind-image.sh OUT.tar [TAG]    TAG defaults to $IMAGE_REPO/bind9:<tag of tools/bind9.20/version>
#   hack/bind-image.sh --tag            prints the default tag's version part (9.20.30-1-deb13u1)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ver=$(tr -d '[:space:]' <"$root/tools/bind9.20/version")
tagver=${ver#*:}; tagver=${tagver//\~/-}
if [ "${1:-}" = "--tag" ]; then echo "$tagver"; exit 0; fi
out=${1:?usage: hack/bind-image.sh OUT.tar [TAG]}
tag=${2:-${IMAGE_REPO:-git.unkin.net/unkin/bind-fn}/bind9:$tagver}
r=$(readlink -f "${BINDFN_BIND920_ROOT:-$root/bin/bind-9.20}")
[ -x "$r/usr/sbin/named" ] || { echo "bind-image: no BIND 9.20 root at $r: run 'make tools' (hack/install-bind.sh)" >&2; exit 1; }
got=$(chroot "$r" dpkg-query -W -f '${Version}' bind9)
[ "$got" = "$ver" ] || { echo "bind-image: the root holds bind9 $got, tools/bind9.20/version wants $ver" >&2; exit 1; }
img=${IMAGE_TOOL:-$root/bin/image}
[ -x "$img" ] || (cd "$root" && go build -o "$img" ./hack/image)

progs=(/usr/sbin/named /usr/sbin/rndc /usr/bin/named-checkconf /usr/bin/named-checkzone /usr/bin/dig)
declare -A files=([/etc/ld.so.cache]=1)
for p in "${progs[@]}"; do
  while read -r a b c _; do
    if [ "$b" = "=>" ] && [[ $c == /* ]]; then files[$c]=1; elif [[ $a == /* ]]; then files[$a]=1; fi
  done < <(chroot "$r" /usr/bin/ldd "$p")
done
args=(-bin "$r${progs[0]}" -path-in-image "${progs[0]}" -tag "$tag" -o "$out" -user 53:53
      -env PATH=/usr/sbin:/usr/bin:/sbin:/bin)
for p in "${progs[@]:1}"; do args+=(-extra-file "$r$p:$p"); done
for f in $(printf '%s\n' "${!files[@]}" | LC_ALL=C sort); do args+=(-extra-file "$r$f:$f"); done
mkdir -p "$(dirname "$out")"
"$img" "${args[@]}"
