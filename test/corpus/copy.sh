#!/bin/sh
# copy.sh GITDIR [COMMIT]: re-copies the BIND system-test inputs this corpus
# uses from a git directory of ISC's bind9 repository
# (https://github.com/isc-projects/bind9) into testdata/isc/<commit>/.
# It copies data only (zone files, checkconf files, COPYRIGHT); nothing of
# bind9 is built or run.
#
# system/: every zone file of bin/tests/system/<test>/ns*/ that a named.conf
# of the same server directory (named*.conf, .conf.in, .conf.j2), or a .conf
# of the test directory itself (checkconf loads zones so), names in
# `zone "ORIGIN" { type primary; file "FILE"; }`, under the path the server reads it
# from. A FILE.db.in is taken where the test's setup.sh copies it verbatim
# (`cp [-f] X.db.in Y.db`, literal names) and it holds no @PLACEHOLDER@;
# $INCLUDEd files (relative to the server directory, as named reads them)
# are copied beside it. system/index.tsv lists each copied zone (file,
# origin, test, source); system/skipped.tsv every other system-test zone
# file with the reason.
set -eu
git_dir=$1
commit=${2:-bf74540dfe23bcb77afa62f65d1a290535435747}
out=$(dirname "$0")/testdata/isc/$commit
rm -rf "$out"
mkdir -p "$out/checkzone/zones" "$out/checkconf" "$out/system"
g() { git --git-dir="$git_dir" "$@"; }
g show "$commit:COPYRIGHT" >"$out/COPYRIGHT"
for f in $(g ls-tree --name-only "$commit" bin/tests/system/checkzone/zones/ | grep '\.db$'); do
	g show "$commit:$f" >"$out/checkzone/zones/${f##*/}"
done
for f in $(g grep -l 'dnssec-policy' "$commit" -- 'bin/tests/system/checkconf/*.conf' | sed "s/^$commit://"); do
	g show "$commit:$f" >"$out/checkconf/${f##*/}"
done

sys=bin/tests/system
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g ls-tree -r --name-only "$commit" "$sys" >"$tmp/tree"
exists() { grep -qxF "$1" "$tmp/tree"; }

# zones: server-dir<TAB>origin<TAB>file<TAB>type, from every named.conf of a server
# directory. Comments and Jinja tags are dropped; a zone whose name or file
# is a template expression is not taken.
grep -E "^$sys/[^/]+/(ns[^/]*/named[^/]*|[^/]+)\.conf(\.in|\.j2)?$" "$tmp/tree" | while read -r conf; do
	dir=${conf%/*}
	g show "$commit:$conf" | awk -v dir="${dir#"$sys"/}" '
	{ sub(/(^|[ \t])(\/\/|#).*/, ""); gsub(/\{%[^%]*%\}/, ""); gsub(/\{#[^#]*#\}/, ""); text = text " " $0 }
	END {
		gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", text)
		gsub(/[{};]/, " & ", text)
		n = split(text, tok, /[ \t]+/)
		depth = 0; zd = -1
		for (i = 1; i <= n; i++) {
			t = tok[i]
			if (t == "{") { depth++; continue }
			if (t == "}") {
				depth--
				if (zd >= 0 && depth == zd) {
					if (f != "" && zone !~ /[{}@$]/ && f !~ /[{}@$]/) print dir "\t" zone "\t" f "\t" (ztype == "master" ? "primary" : ztype)
					zd = -1
				}
				continue
			}
			if (zd < 0 && t == "zone" && tok[i+1] != "{" && tok[i+1] != ";") {
				zone = tok[i+1]; gsub(/"/, "", zone); f = ""; ztype = ""
				for (j = i + 1; j <= n && tok[j] != "{" && tok[j] != ";"; j++) ;
				if (tok[j] == "{") { zd = depth; depth++; i = j }
				continue
			}
			if (zd >= 0 && depth == zd + 1 && t == "file" && tok[i+1] ~ /^"/) { f = tok[i+1]; gsub(/"/, "", f) }
			if (zd >= 0 && depth == zd + 1 && t == "type") ztype = tok[i+1]
		}
	}'
done | sort -u >"$tmp/zones"

# copies: test<TAB>source<TAB>destination of setup.sh lines `cp [-f] A.db.in B`
# with literal names, relative to the test directory.
for s in $(grep -E "^$sys/[^/]+/setup\.sh$" "$tmp/tree"); do
	t=${s#"$sys"/}
	t=${t%/setup.sh}
	g show "$commit:$s" | awk -v t="$t" '
	$1 == "cp" { a = 2; if ($2 == "-f") a = 3
		if (NF == a + 1 && $a ~ /\.db\.in$/ && $a !~ /[$"*]/ && $(a+1) !~ /[$"*]/) print t "\t" $a "\t" $(a+1) }'
done >"$tmp/copies"

printf 'file\torigin\ttest\tsource\n' >"$out/system/index.tsv"
printf 'source\treason\n' >"$tmp/skipped"
# includes SRC DIR: copies what SRC (a file of server directory DIR) $INCLUDEs,
# or fails with the name of one it cannot find.
includes() {
	for inc in $(g show "$commit:$1" | awk 'toupper($1) == "$INCLUDE" { f = $2; gsub(/"/, "", f); print f }'); do
		p=$(realpath -m --relative-to=/ "/$2/$inc")
		if ! exists "$p" || [ "${p#"$sys"/}" = "$p" ]; then
			echo "$inc"
			return 1
		fi
		mkdir -p "$out/system/$(dirname "${p#"$sys"/}")"
		g show "$commit:$p" >"$out/system/${p#"$sys"/}"
		includes "$p" "$2" || return 1
	done
}
grep -E '\.db(\.in)?$' "$tmp/tree" | grep "^$sys/" | while read -r src; do
	rel=${src#"$sys"/}
	test=${rel%%/*}
	if [ "$test" = checkzone ]; then
		printf '%s\t%s\n' "$rel" "in the checkzone corpus (checkzone/zones, TestZoneCorpus)" >>"$tmp/skipped"
		continue
	fi
	dests=$rel
	case $rel in
	*.db.in)
		if g show "$commit:$src" | grep -q '@[A-Z0-9_]*@'; then
			printf '%s\t%s\n' "$rel" "a template: the setup substitutes @PLACEHOLDER@s" >>"$tmp/skipped"
			continue
		fi
		# A literal path from the test directory, or a bare name the setup
		# copies after changing into the file's own directory.
		dests=$(awk -F'\t' -v t="$test" -v r="$rel" '$1 == t {
			dir = r; sub(/\/[^\/]*$/, "", dir); base = substr(r, length(dir) + 2)
			if (t "/" $2 == r) print t "/" $3
			else if ($2 == base && $3 !~ /\//) print dir "/" $3 }' "$tmp/copies" | sort -u)
		if [ -z "$dests" ]; then
			printf '%s\t%s\n' "$rel" "the setup does not copy it verbatim into a zone file (it signs it, adds keys, or names the copies in a loop)" >>"$tmp/skipped"
			continue
		fi
		;;
	esac
	taken=0
	for d in $dests; do
		sdir=${d%/*}
		base=${d#"$sdir"/}
		awk -F'\t' -v s="$sdir" -v b="$base" '$1 == s && $3 == b && $4 == "primary" { print $2 }' "$tmp/zones" >"$tmp/origins"
		if [ ! -s "$tmp/origins" ]; then
			other=$(awk -F'\t' -v s="$sdir" -v b="$base" '$1 == s && $3 == b { print $4 }' "$tmp/zones" | sort -u | tr '\n' ' ')
			if [ -n "$other" ]; then
				printf '%s\t%s\n' "$rel" "named loads it as a zone of type ${other% }, not a primary zone" >>"$tmp/skipped"
				taken=1
			fi
			continue
		fi
		if ! miss=$(includes "$src" "$sys/$sdir"); then
			printf '%s\t%s\n' "$rel" "\$INCLUDE $miss: generated by the setup (not in the repository)" >>"$tmp/skipped"
			taken=1
			break
		fi
		mkdir -p "$out/system/$sdir"
		g show "$commit:$src" >"$out/system/$d"
		while read -r o; do
			printf '%s\t%s\t%s\t%s\n' "$d" "$o" "$test" "$rel" >>"$out/system/index.tsv"
		done <"$tmp/origins"
		taken=1
	done
	if [ $taken = 0 ] && awk -F'\t' -v f="$rel" '$1 "/" $3 ~ "^" f "\\.(signed|[^/]*)$" { found = 1 } END { exit !found }' "$tmp/zones"; then
		printf '%s\t%s\n' "$rel" "an input of the setup: named loads a file made from it (signed, or with keys added)" >>"$tmp/skipped"
	elif [ $taken = 0 ]; then
		printf '%s\t%s\n' "$rel" "no named.conf of its server directory names it as a zone's file" >>"$tmp/skipped"
	fi
done
cp "$tmp/skipped" "$out/system/skipped.tsv"
