#!/bin/sh
# conformance.sh regenerates docs/conformance.md, the side-by-side
# Http11Probe table of riptide and its peers, in one command:
#
#	cmd/riptide-probe/conformance.sh
#	SERVERS="riptide-native nethttp" cmd/riptide-probe/conformance.sh -category smuggling
#
# SERVERS (default "riptide-native riptide-compat riptide-native-h2c
# riptide-compat-h2c nethttp fasthttp") names the columns, in order:
#   riptide-native, riptide-compat  riptide with a zero-value Server and the
#       probe routes of conformance_test.go, on the native API and through
#       riptide.FromHTTP: exactly what the CI test (go test -run
#       TestConformance .) asserts. They are served by the package's test
#       binary (TestConformanceServe).
#   riptide-native-h2c, riptide-compat-h2c  the same with HTTP2.H2C on, so
#       that HTTP/2 with prior knowledge shares the port (what the CI
#       test's -h2c runs assert).
#   any directory of bench/servers (nethttp, fasthttp, chi, ...), launched
#       with -profile probe.
# It builds riptide-probe and the servers, launches them on 127.0.0.1, runs
# the suite, writes docs/conformance.md and appends the list of Warns riptide
# keeps (testdata/conformance/warns.md, rendered from conformance_test.go).
# The JSON goes next to it when CONFORMANCE_JSON is set. Extra arguments go
# to riptide-probe.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT INT TERM

: "${SERVERS:=riptide-native riptide-compat riptide-native-h2c riptide-compat-h2c nethttp fasthttp}"

(cd "$root" && go build -o "$bin/riptide-probe" ./cmd/riptide-probe)
nlaunch=0
for s in $SERVERS; do
	case $s in
	riptide-native | riptide-compat | riptide-native-h2c | riptide-compat-h2c)
		[ -x "$bin/riptide.test" ] || (cd "$root" && go test -c -o "$bin/riptide.test" .)
		mode=${s#riptide-}
		set -- "$@" -launch "riptide $(echo "$mode" | tr - ' ')=$bin/riptide.test -test.run=^TestConformanceServe\$ -test.timeout=0 -conformance-serve=$mode --"
		;;
	*)
		if [ ! -d "$root/bench/servers/$s" ]; then
			echo "conformance.sh: no bench/servers/$s, skipped" >&2
			continue
		fi
		(cd "$root/bench" && go build -o "$bin/$s" "./servers/$s")
		name=$s
		[ "$s" = nethttp ] && name=net/http
		set -- "$@" -launch "$name=$bin/$s"
		;;
	esac
	nlaunch=$((nlaunch + 1))
done
[ "$nlaunch" -gt 0 ] || { echo "conformance.sh: no servers to run" >&2; exit 2; }

mkdir -p "$root/docs"
"$bin/riptide-probe" -q \
	-markdown "$root/docs/conformance.md" \
	-json "${CONFORMANCE_JSON:-$bin/conformance.json}" "$@"
cat "$root/testdata/conformance/warns.md" >>"$root/docs/conformance.md"
echo "wrote $root/docs/conformance.md"
