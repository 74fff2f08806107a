#!/bin/sh
# copy.sh GITDIR [COMMIT]: re-copies the BIND system-test inputs this corpus
# uses from a git directory of ISC's bind9 repository
# (https://github.com/isc-projects/bind9) into testdata/isc/<commit>/.
# It copies data only (zone files, checkconf files, COPYRIGHT); nothing of
# bind9 is built.
set -eu
git_dir=$1
commit=${2:-bf74540dfe23bcb77afa62f65d1a290535435747}
out=$(dirname "$0")/testdata/isc/$commit
rm -rf "$out"
mkdir -p "$out/checkzone/zones" "$out/checkconf"
g() { git --git-dir="$git_dir" "$@"; }
g show "$commit:COPYRIGHT" >"$out/COPYRIGHT"
for f in $(g ls-tree --name-only "$commit" bin/tests/system/checkzone/zones/ | grep '\.db$'); do
	g show "$commit:$f" >"$out/checkzone/zones/${f##*/}"
done
for f in $(g grep -l 'dnssec-policy' "$commit" -- 'bin/tests/system/checkconf/*.conf' | sed "s/^$commit://"); do
	g show "$commit:$f" >"$out/checkconf/${f##*/}"
done
