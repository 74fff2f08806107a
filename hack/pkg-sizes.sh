#!/usr/bin/env bash
# Prints each package of the root module under internal/: its Go lines
# (non-test, test) and the project's packages it imports (non-test), one row
# each, as a Markdown table. docs/architecture.md's "Sizes" table comes
# from it: run at two commits to compare.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m)
echo "| package | lines | test lines | imports (internal/) |"
echo "|---|---:|---:|---|"
go list -f '{{.ImportPath}}|{{.Dir}}|{{join .GoFiles " "}}|{{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}|{{join .Imports " "}}' ./internal/... |
while IFS='|' read -r path dir files tests imports; do
  count() { local n=0 f; for f in $1; do n=$((n + $(wc -l <"$dir/$f"))); done; echo $n; }
  own=$(for i in $imports; do case $i in "$mod"/internal/*) echo "${i#"$mod"/internal/}";; esac; done | sort | tr '\n' ' ')
  echo "| ${path#"$mod"/} | $(count "$files") | $(count "$tests") | ${own% } |"
done
