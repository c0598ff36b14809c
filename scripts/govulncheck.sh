#!/usr/bin/env bash
# govulncheck.sh [PATTERNS...] runs govulncheck (pinned) on the module
# (default ./...) against a vulnerability database built offline.
#
# vuln.go.dev is not reachable from the project's machines, but the Go
# module proxy serves golang.org/x/vulndb, whose data/osv/ holds every
# report of the Go vulnerability database as OSV JSON, and whose
# cmd/indexdb turns such a folder into the v1 database layout that
# `govulncheck -db file://DIR` reads. The database is built once per
# VULNDB_VERSION (about a minute, the first time the tool is compiled) and
# kept under the Go build cache; later runs only scan.
#
# Environment:
#   KDYN_VULNDB       use this database URL instead (file://DIR or https://…)
#   KDYN_VULNDB_DIR   where to build and keep the database
#                     (default $(go env GOCACHE)/kdyn-vulndb/VULNDB_VERSION)
#   VULNDB_VERSION    golang.org/x/vulndb version to take the reports from;
#                     newer: go list -m -json golang.org/x/vulndb@latest
#   GO                the go command (default go)
#
# Exit status: govulncheck's (0 nothing found, 3 vulnerabilities that the
# code reaches), or 2 when no database can be had.
set -euo pipefail

GOVULNCHECK_VERSION="v1.9.0"
VULNDB_VERSION="${VULNDB_VERSION:-v0.0.0-20261105234957-e22db6528018}"
go="${GO:-go}"

cd "$(dirname "$0")/.."
root="$PWD"
[ "$#" -gt 0 ] || set -- ./...

# build_db DIR: the v1 database from golang.org/x/vulndb@VULNDB_VERSION into
# DIR, atomically (a half-built database is never left behind).
build_db() {
	local dir="$1" work src
	work="$(mktemp -d)"
	trap 'rm -rf "$work"' RETURN
	echo "govulncheck.sh: building the vulnerability database from golang.org/x/vulndb@$VULNDB_VERSION" >&2
	# Outside any module, so that the project's go.mod is not consulted.
	src="$(cd "$work" && GOFLAGS= "$go" mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')" || return 1
	if [ -z "$src" ] || [ ! -d "$src/data/osv" ]; then
		echo "govulncheck.sh: golang.org/x/vulndb@$VULNDB_VERSION has no data/osv folder" >&2
		return 1
	fi
	(cd "$work" && GOFLAGS= "$go" run "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION" -vulns "$src/data/osv" -out "$work/db") || return 1
	[ -s "$work/db/index/db.json" ] && [ -s "$work/db/index/modules.json" ] || return 1
	mkdir -p "$(dirname "$dir")"
	rm -rf "$dir"
	mv "$work/db" "$dir"
}

# govulncheck, installed once per version beside the database (go run
# would turn its exit status 3, "vulnerabilities found", into 1).
tools="$("$go" env GOCACHE)/kdyn-tools/govulncheck-$GOVULNCHECK_VERSION"
if [ ! -x "$tools/govulncheck" ]; then
	(cd "$(mktemp -d)" && GOFLAGS= GOBIN="$tools" "$go" install "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION")
fi
govulncheck="$tools/govulncheck"

db="${KDYN_VULNDB:-}"
if [ -z "$db" ]; then
	dir="${KDYN_VULNDB_DIR:-$("$go" env GOCACHE)/kdyn-vulndb/$VULNDB_VERSION}"
	if [ ! -s "$dir/index/db.json" ] && ! build_db "$dir"; then
		echo "govulncheck.sh: could not build the vulnerability database from golang.org/x/vulndb@$VULNDB_VERSION" >&2
		echo "govulncheck.sh: trying govulncheck's default database (vuln.go.dev) instead" >&2
		cd "$root"
		status=0
		"$govulncheck" "$@" || status=$?
		if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
			echo "govulncheck.sh: FAILED: no vulnerability database is reachable (neither golang.org/x/vulndb through the module proxy nor vuln.go.dev); nothing was checked" >&2
			exit 2
		fi
		exit "$status"
	fi
	db="file://$dir"
	count="$(ls "$dir/ID" | grep -c '\.json$' || true)"
	# The pseudo-version's date is the date of the newest report.
	date="$(echo "$VULNDB_VERSION" | sed -n 's/^v0\.0\.0-\([0-9]\{4\}\)\([0-9]\{2\}\)\([0-9]\{2\}\).*/\1-\2-\3/p')"
	echo "govulncheck.sh: $count reports from golang.org/x/vulndb@$VULNDB_VERSION (${date:-date unknown}) in $dir" >&2
fi

cd "$root"
echo "govulncheck.sh: govulncheck@$GOVULNCHECK_VERSION -db $db $*" >&2
exec "$govulncheck" -db "$db" "$@"
