#!/usr/bin/env bash
# testflags.sh race|goflags prints a setting for `make test`, and says on
# stderr, in a NOTICE line, whenever it departs from what make test
# promises (every test, with the race detector).
#
#   race     "-race" when the race detector can work here: cgo is enabled
#            (`go env CGO_ENABLED` is 1) and the C compiler `go env CC`
#            names compiles a program. Otherwise nothing, with a NOTICE
#            saying why and how to get -race back (install gcc or clang;
#            CGO_ENABLED=1). A machine with only Go then still runs every
#            test, without the race detector.
#   goflags  the GOFLAGS for make test: `go env GOFLAGS` (the environment's,
#            or the one set with go env -w) without -short, which would skip
#            every test that needs the control plane and still pass; when
#            one is removed, a NOTICE says so and -short=false is added, so
#            that a go env -w setting cannot bring it back (a non-empty
#            $GOFLAGS replaces it). `make test-short` runs the short tests.
#
# Environment: GO (the go command, default go), GOTOOLCHAIN, GOFLAGS,
# CGO_ENABLED, CC (read through go env).
set -euo pipefail

go="${GO:-go}"

notice() { echo "NOTICE: make test: $*" >&2; }

case "${1:-}" in
race)
	cgo=$("$go" env CGO_ENABLED)
	if [[ "$cgo" != 1 ]]; then
		notice "running WITHOUT the race detector: cgo is disabled (go env CGO_ENABLED=$cgo); -race needs cgo and a C compiler (install gcc or clang and set CGO_ENABLED=1)"
		exit 0
	fi
	cc=$("$go" env CC)
	read -r -a ccwords <<<"${cc:-gcc}"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	if ! printf 'int main(void) { return 0; }\n' >"$tmp/main.c" ||
		! "${ccwords[@]}" -o "$tmp/main" "$tmp/main.c" >"$tmp/cc.out" 2>&1; then
		notice "running WITHOUT the race detector: the C compiler '${cc:-gcc}' (go env CC) does not work here ($(head -c 200 "$tmp/cc.out" | tr '\n' ' ')); -race needs cgo and a C compiler (install gcc or clang)"
		exit 0
	fi
	echo -race
	;;
goflags)
	kept=()
	dropped=()
	read -r -a flags <<<"$("$go" env GOFLAGS)"
	for f in "${flags[@]+"${flags[@]}"}"; do
		case "$f" in
		-short=false | -short=0 | -short=f | -short=F | -short=FALSE | -short=False) kept+=("$f") ;;
		-short | -short=* | --short | --short=* | -test.short | -test.short=* | --test.short | --test.short=*) dropped+=("$f") ;;
		*) kept+=("$f") ;;
		esac
	done
	if [[ ${#dropped[@]} -gt 0 ]]; then
		notice "removed ${dropped[*]} from GOFLAGS: it would skip every test that needs the control plane and still pass (make test-short runs only the short tests)"
		kept+=(-short=false)
	fi
	echo "${kept[*]+"${kept[*]}"}"
	;;
*)
	echo "usage: $0 race|goflags" >&2
	exit 2
	;;
esac
