#!/bin/sh
# conformance.sh regenerates docs/conformance.md, the side-by-side
# Http11Probe table of the bench servers, in one command:
#
#	cmd/riptide-probe/conformance.sh            # every bench/servers/* binary
#	SERVERS="riptide nethttp" cmd/riptide-probe/conformance.sh -category smuggling
#
# It builds riptide-probe and each server under bench/servers (riptide ones
# first), launches them on 127.0.0.1 with -profile probe, runs the suite and
# writes docs/conformance.md (and the JSON next to it when CONFORMANCE_JSON is
# set). Extra arguments go to riptide-probe.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT INT TERM

if [ -z "${SERVERS:-}" ]; then
	all=$(cd "$root/bench/servers" && ls -d */ | tr -d / | sort)
	SERVERS="$(echo "$all" | grep '^riptide' || true) $(echo "$all" | grep -v '^riptide' || true)"
fi

(cd "$root" && go build -o "$bin/riptide-probe" ./cmd/riptide-probe)
launch=""
for s in $SERVERS; do
	if [ ! -d "$root/bench/servers/$s" ]; then
		echo "conformance.sh: no bench/servers/$s, skipped" >&2
		continue
	fi
	(cd "$root/bench" && go build -o "$bin/$s" "./servers/$s")
	launch="$launch -launch $s=$bin/$s"
done
[ -n "$launch" ] || { echo "conformance.sh: no servers to run" >&2; exit 2; }

mkdir -p "$root/docs"
# shellcheck disable=SC2086 # $launch is a list of flags
"$bin/riptide-probe" $launch -q \
	-markdown "$root/docs/conformance.md" \
	-json "${CONFORMANCE_JSON:-$bin/conformance.json}" "$@"
echo "wrote $root/docs/conformance.md"
