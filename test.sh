#!/usr/bin/env bash
# test.sh runs riptide's whole test suite from a clean clone: formatting,
# go vet and staticcheck on every module, go vet for every supported
# platform (GOOS/GOARCH), then go test -race in every module,
# then the allocation tests without -race.
# Long benchmarks and long fuzzing are not part of it; see README.md.
set -euo pipefail
cd "$(dirname "$0")"

STATICCHECK_VERSION=v0.8.2
export PATH="$(go env GOPATH)/bin:$PATH"

# Every Go module in the repository (the core module, compress/, http3/ and
# the test/bench/example/tool modules), developed together through go.work
# at the root (each module requires its siblings at the release version;
# go.work maps them to their directories).
mapfile -t modules < <(find . -name go.mod -not -path './.git/*' -not -path '*/testdata/*' -printf '%h\n' | sort)

echo "== gofmt"
unformatted=$(gofmt -l . | grep -v '/testdata/' || true)
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

# The release rules first (internal/release; README "Versions and
# compatibility"): every module zip valid, go.mod requires at the version of
# version.go and go.work using every module (a module missing from it would
# fail every go command below with a less clear message; `go run
# ./internal/release sync` fixes both), CHANGELOG.md at that version.
echo "== release: check"
go run ./internal/release check

if ! command -v staticcheck >/dev/null || ! staticcheck -version | grep -q "${STATICCHECK_VERSION#v}"; then
	echo "== installing staticcheck $STATICCHECK_VERSION"
	go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi

for m in "${modules[@]}"; do
	echo "== $m: go vet, staticcheck"
	(cd "$m" && go vet ./... && staticcheck ./...)
done

# The platform matrix: every target riptide supports must build, features
# that need Linux or Unix degrading with an error there (build-tag pairs such
# as sendfile_linux.go/sendfile_other.go). go vet cross-compiles and
# type-checks the tests too, without linking; its results are cached, so a
# rerun takes seconds (a cold cache compiles the standard library once per
# target: a few minutes). The bench module is checked on one target of each
# build-tag family (32-bit, other Unix, freebsd's Rlimit types, Windows): it
# pulls in SQLite, the slowest package to compile.
platforms=(linux/amd64 linux/arm64 linux/386 darwin/amd64 darwin/arm64 windows/amd64 freebsd/amd64)
bench_platforms=(linux/386 darwin/arm64 windows/amd64 freebsd/amd64)
for p in "${platforms[@]}"; do
	echo "== .: go vet for $p"
	GOOS=${p%/*} GOARCH=${p#*/} go vet ./...
done
for p in "${bench_platforms[@]}"; do
	echo "== bench: go vet for $p"
	(cd bench && GOOS=${p%/*} GOARCH=${p#*/} go vet ./...)
done

# The exported API against the previous release's api/vX.Y.Z.txt; then the
# install test: the modules of the working tree published into a file
# module proxy at the version of version.go, and a fresh module outside the
# repository that runs `go get` of the core, compress and http3 (each
# alone), builds and serves over HTTP/1.1 and HTTP/3 (third-party modules
# come from the module cache or GOPROXY; about 30 s).
echo "== release: API diff, install test"
go run ./internal/release apidiff
go run ./internal/release install

for m in "${modules[@]}"; do
	echo "== $m: go test -race"
	(cd "$m" && go test -race -count=1 -timeout 20m ./...)
done

# The root package's suite once more on the other engine (the default is the
# event loop on Linux; see engine.go): every server test runs on both.
echo "== .: go test -race with RIPTIDE_ENGINE=goroutine"
RIPTIDE_ENGINE=goroutine go test -race -count=1 -timeout 20m .

# And once more with handlers on the loop (EngineOnLoop, opt-in): without
# -race to keep CI time down; the on-loop tests themselves (TestOnLoop*,
# which set Server.Engine) already ran under -race above.
echo "== .: go test with RIPTIDE_ENGINE=onloop"
RIPTIDE_ENGINE=onloop go test -count=1 -timeout 20m .

# TLS runs on the event loop by default (Server.TLSEngine follows Engine), so
# the runs above cover it, h2spec over TLS and the HTTP/2 floods that start on
# a parked HTTP/2-over-TLS connection included. Here the TLS servers of the
# TLS and HTTP/2 tests run on the goroutine engine beside the event loop
# (TLSEngine: EngineGoroutine; engine_test.go reads RIPTIDE_TLS_ENGINE).
echo "== .: TLS tests with RIPTIDE_TLS_ENGINE=goroutine"
RIPTIDE_TLS_ENGINE=goroutine go test -race -count=1 -timeout 30m \
	-run 'TestTLS|TestCompatTLS$|TestErrServerClosedIsHTTPs|TestProxyProtocolTLSHandshakeAfterHeader|TestProxyListenerUnderOwnTLS|TestH2Server|TestH2Spec|TestCompatLateWrite$|TestResponseHeadRules|TestAltSvc|TestH2[A-Za-z]*FromParked|TestH2Park' .

# The allocation tests and the idle-memory test skip themselves under -race
# (its instrumentation allocates and inflates RSS), so they run once more
# without it.
echo "== .: allocation and idle-memory tests without -race"
go test -count=1 -run 'Alloc|IdleMemory|IdleCost' -v ./... | grep -E '^(=== RUN|--- |ok|FAIL|panic)|allocs|KiB'
echo "== http3: allocation and idle-cost tests without -race"
(cd http3 && go test -count=1 -run 'Alloc|IdleConn' -v ./... | grep -E '^(=== RUN|--- |ok|FAIL|panic)|allocs|KiB|goroutines')
echo "== compress: allocation tests without -race"
(cd compress && go test -count=1 -run 'Alloc' -v ./... | grep -E '^(=== RUN|--- |ok|FAIL|panic)|allocs')
echo "== otel: allocation tests without -race"
(cd otel && go test -count=1 -run 'Alloc' -v ./... | grep -E '^(=== RUN|--- |ok|FAIL|panic)|allocs')
echo "== .: allocation tests without -race, RIPTIDE_ENGINE=goroutine"
RIPTIDE_ENGINE=goroutine go test -count=1 -run 'Alloc' -v . | grep -E '^(=== RUN|--- |ok|FAIL|panic)|allocs'
