#!/usr/bin/env bash
# toolchain.sh prints the GOTOOLCHAIN value that make (and .ci/run) build
# with, and says on stderr which toolchain that is and why.
#
# The pinned toolchain is go1.26.10: Go 1.26.8 and older 1.26 releases have
# standard-library vulnerabilities that govulncheck reports as reachable
# (net/http, crypto/tls, crypto/x509); 1.26.10 fixes them. The go command
# fetches it from the module proxy once.
#
# An environment that already sets GOTOOLCHAIN does not lower that:
#   unset, "auto"                 the pinned toolchain
#   goX.Y.Z[+auto|+path]          that toolchain if it is at least as new as
#                                 the pinned one, else the pinned one
#   "local", "path"               the go command's own release if it is at
#                                 least as new (`GOTOOLCHAIN=local go env
#                                 GOVERSION`), else the pinned one
#   anything else                 the pinned one
# So GOTOOLCHAIN=local with an older local Go still builds with the pinned
# release; to build with a newer one, set GOTOOLCHAIN=go1.27.0 (say) or
# install it and set GOTOOLCHAIN=local.
#
# Environment: GOTOOLCHAIN (read), GO (the go command, default go).
set -euo pipefail

pinned=go1.26.10
go="${GO:-go}"

# key VERSION prints a number that orders Go toolchain names (go1.26.10,
# go1.27rc1, go1.27.0), or nothing for a name that is not one.
key() {
	if [[ "$1" =~ ^go([0-9]+)\.([0-9]+)(\.([0-9]+))?((rc|beta)([0-9]+))?$ ]]; then
		local major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]} patch=${BASH_REMATCH[4]:-0}
		local pre=${BASH_REMATCH[6]} pren=${BASH_REMATCH[7]:-0}
		local rank
		case "$pre" in
		beta) rank=$((10#$pren)) ;;
		rc) rank=$((500 + 10#$pren)) ;;
		*) rank=$(((10#$patch + 1) * 1000)) ;;
		esac
		echo $(((10#$major * 1000 + 10#$minor) * 1000000 + rank))
	fi
}

# use VALUE WHY: print the choice.
use() {
	echo "toolchain: building with GOTOOLCHAIN=$1 ($2)" >&2
	echo "$1"
}

want="${GOTOOLCHAIN:-}"
case "$want" in
"")
	use "$pinned" "the pinned release"
	;;
auto)
	use "$pinned" "the pinned release; the environment's GOTOOLCHAIN=auto could pick an older one"
	;;
local | path)
	have=$(GOTOOLCHAIN="$want" "$go" env GOVERSION 2>/dev/null || true)
	if [[ -n "$(key "$have")" && "$(key "$have")" -ge "$(key "$pinned")" ]]; then
		use "$want" "the environment's; its $have is at least the pinned $pinned"
	else
		use "$pinned" "the pinned release; the environment's GOTOOLCHAIN=$want is ${have:-an unknown release}, older than $pinned, which fixes reachable standard-library vulnerabilities"
	fi
	;;
*)
	version=${want%+auto}
	version=${version%+path}
	if [[ -n "$(key "$version")" && "$(key "$version")" -ge "$(key "$pinned")" ]]; then
		use "$want" "the environment's; at least the pinned $pinned"
	elif [[ -n "$(key "$version")" ]]; then
		use "$pinned" "the pinned release; the environment's GOTOOLCHAIN=$want is older, and $pinned fixes reachable standard-library vulnerabilities"
	else
		use "$pinned" "the pinned release; the environment's GOTOOLCHAIN=$want is not a toolchain name"
	fi
	;;
esac
