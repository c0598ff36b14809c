#!/usr/bin/env bash
# fuzz.sh [SECONDS] [REGEXP] runs every fuzz target of the module, one after
# another, for SECONDS each (default 30), and fails if any fails.
#
# Targets are found by scanning the module's packages (go list ./...: the
# nested bench and controlplane modules are not part of it) for
# "func FuzzXxx(f *testing.F)" in their _test.go files, so new targets are
# picked up without editing this script. REGEXP, when given, keeps only the
# targets whose "package.FuzzName" matches it (grep -E).
#
# A failing input is written by go test to the package's
# testdata/fuzz/FuzzName/ directory; commit it with the fix, so that the
# normal test run (make test) keeps checking it.
#
# Environment:
#   FUZZ_MINIMIZE  -fuzzminimizetime for each target (default 10s; go's own
#                  default, 60s, can eat a whole short run).
#   GO             the go command (default go).
set -euo pipefail

secs="${1:-30}"
filter="${2:-}"
minimize="${FUZZ_MINIMIZE:-10s}"
go="${GO:-go}"

if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -eq 0 ]; then
	echo "usage: $0 [SECONDS] [REGEXP]   (SECONDS must be a positive integer, got '$secs')" >&2
	exit 2
fi

cd "$(dirname "$0")/.."

# "importpath FuzzName" lines, sorted.
targets=()
while IFS= read -r line; do
	targets+=("$line")
done < <(
	"$go" list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do
		for f in "$dir"/*_test.go; do
			[ -e "$f" ] || continue
			sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(f \*testing\.F\).*/\1/p' "$f" | while read -r name; do
				echo "$pkg $name"
			done
		done
	done | sort -u
)

if [ -n "$filter" ]; then
	kept=()
	for t in "${targets[@]}"; do
		read -r pkg name <<<"$t"
		if echo "${pkg##*/}.$name" | grep -Eq -- "$filter"; then
			kept+=("$t")
		fi
	done
	targets=("${kept[@]+"${kept[@]}"}")
fi

if [ "${#targets[@]}" -eq 0 ]; then
	echo "fuzz.sh: no fuzz targets found${filter:+ matching '$filter'}" >&2
	exit 1
fi

echo "fuzz.sh: ${#targets[@]} targets, ${secs}s each (about $(( ${#targets[@]} * secs / 60 + 1 )) minutes)"
failed=()
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "=== $pkg $name"
	if ! "$go" test -run='^$' -fuzz="^${name}\$" -fuzztime="${secs}s" -fuzzminimizetime="$minimize" "$pkg"; then
		failed+=("$pkg $name")
	fi
done

echo
if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz.sh: ${#failed[@]} of ${#targets[@]} targets failed:"
	printf '  %s\n' "${failed[@]}"
	echo "The failing inputs are under each package's testdata/fuzz/; re-run one with go test -run=FuzzName/INPUT PACKAGE."
	exit 1
fi
echo "fuzz.sh: all ${#targets[@]} targets passed"
