#!/bin/sh
# isc-copy.sh GITDIR [COMMIT]: re-copies the BIND system-test servers this
# corpus holds (isc-<test>-<ns>/) from a git directory of ISC's bind9
# repository (https://github.com/isc-projects/bind9), at the commit
# test/corpus pins. Each server's named.conf.j2 is rendered the way the
# system tests' templates would be for ns<N> (10.53.0.<N>, port 53, every
# optional feature off), its zone files are laid out as the test's
# setup.sh lays them (the steps are below, per server), and ISC's
# COPYRIGHT (MPL-2.0) goes beside them. Two things are left out and say so
# in the file: the controls statement (it includes the test's rndc.key;
# bind-fn runs rndc itself) and the root hint's path (copied beside).
# Nothing of bind9 is built or run.
set -eu
git_dir=$1
commit=${2:-bf74540dfe23bcb77afa62f65d1a290535435747}
here=$(cd "$(dirname "$0")" && pwd)
g() { git --git-dir="$git_dir" "$@"; }
show() { g show "$commit:bin/tests/system/$1"; }

# render FILE INDENT N: the template, its includes inlined (indented as
# include_indented does), every {% if %} taken as false.
render() {
	show "$1" | {
		skip=0
		while IFS= read -r line; do
			case $line in
			*'{% if '*) skip=$((skip + 1)); continue ;;
			*'{% else %}'*) continue ;;
			*'{% endif %}'*) skip=$((skip - 1)); continue ;;
			esac
			[ "$skip" -gt 0 ] && continue
			case $line in
			*'{% include'*'"_common/controls.conf.j2"'*)
				printf '%s// controls: left out (the test'"'"'s rndc.key; bind-fn runs rndc itself)\n' "$2" ;;
			*'{% include'*)
				inc=${line#*\"}; inc=${inc%%\"*}
				ind=${line%%\{*}
				render "$inc" "$2$ind" "$3" ;;
			*) printf '%s%s\n' "$2" "$line" ;;
			esac
		done
	} | sed -e "s/@ns\.ip@/10.53.0.$3/g" -e "s/@ns\.ip6@/fd92:7065:b8e:ffff::$3/g" \
		-e 's/@PORT@/53/g' -e 's/@TLSPORT@/853/g' -e 's/@CONTROLPORT@/953/g' \
		-e 's/@EXTRAPORT\([0-9]\)@/530\1/g' \
		-e 's/@DEFAULT_ALGORITHM@/ECDSAP256SHA256/g' -e 's/@DEFAULT_HMAC@/hmac-sha256/g' \
		-e 's|"\.\./\.\./_common/root\.hint"|"root.hint"|'
}

# server TEST NS CONF: a fresh isc-TEST-NS with the rendered CONF.
server() {
	out=$here/isc-$1-$2
	rm -rf "$out"
	mkdir -p "$out"
	n=${2#ns}
	{
		printf '// ISC bind9 %s, bin/tests/system/%s/%s/%s, rendered for %s by isc-copy.sh\n' "$commit" "$1" "$2" "$3" "$2"
		printf '// (MPL-2.0: COPYRIGHT beside). %s\n' "$4"
		render "$1/$2/$3" "" "$n"
	} >"$out/named.conf"
	g show "$commit:COPYRIGHT" >"$out/COPYRIGHT"
	if grep -q '"root.hint"' "$out/named.conf"; then show _common/root.hint >"$out/root.hint"; fi
}
# cp FILE [AS]: a file of the server's directory.
cpf() { mkdir -p "$(dirname "$out/${2:-$1}")"; show "$t/$1" >"$out/${2:-$1}"; }

t=notify/ns2
server notify ns2 named.conf.j2 "An authoritative primary: notify primary-only and master-only, also-notify per zone and through remote-servers, a server with a key and a notify-source, dynamic zones."
for f in example1.db generic.db; do cpf $f; done
cpf example1.db example.db; cpf generic.db x21.db; cpf generic.db change-ns.db
rm "$out/example1.db"

t=upforwd/ns1
server upforwd ns1 named.conf.j2 "A dynamic primary: allow-update by key and address, SIG(0) keys named in allow-update, DoT."
cpf example1.db example.db; cpf example3.db.in example3.db
cpf example1.db example2.db; cpf example1.db example2-toomanykeys.db

t=views/ns2
server views ns2 named2.conf.j2 "Two views on two listen-on addresses: dynamic zones, zones shared with in-view, a forward zone in a view, inline-signed zones with a dnssec-policy."
for f in internal.db clone.db 1.10.in-addr.arpa.db internal/inline.db external/inline.db; do cpf $f; done
cpf example1.db example.db

t=forward/ns4
server forward ns4 named.conf.j2 "A resolver: a root hint of its own, forward-only zones, authoritative zones beside."
for f in root.db malicious.db sibling.tld.db; do cpf $f; done

t=acl/ns2
server acl ns2 named.conf.j2 "An authoritative server with TSIG keys and an allow-transfer that negates a key."
show genzone.sh | sh -s 2 3 >"$out/example.db"
cp "$out/example.db" "$out/tsigzone.db"
printf '9.20\nremote-servers, which BIND 9.18 does not know (named.conf:35 and 36; 9.18 calls such lists primaries or masters)\n' >"$here/isc-notify-ns2/bind-releases"
