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

# Every Go module in the repository (the core module and the test/bench modules).
mapfile -t modules < <(find . -name go.mod -not -path './.git/*' -printf '%h\n' | sort)

echo "== gofmt"
unformatted=$(gofmt -l . | grep -v '/testdata/' || true)
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

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

# The allocation tests and the idle-memory test skip themselves under -race
# (its instrumentation allocates and inflates RSS), so they run once more
# without it.
echo "== .: allocation and idle-memory tests without -race"
go test -count=1 -run 'Alloc|IdleMemory' -v ./... | grep -E '^(=== RUN|--- |ok|FAIL|panic)|allocs|KiB'
echo "== http3: allocation and idle-cost tests without -race"
(cd http3 && go test -count=1 -run 'Alloc|IdleConn' -v ./... | grep -E '^(=== RUN|--- |ok|FAIL|panic)|allocs|KiB|goroutines')
echo "== compress: allocation tests without -race"
(cd compress && go test -count=1 -run 'Alloc' -v ./... | grep -E '^(=== RUN|--- |ok|FAIL|panic)|allocs')
echo "== otel: allocation tests without -race"
(cd otel && go test -count=1 -run 'Alloc' -v ./... | grep -E '^(=== RUN|--- |ok|FAIL|panic)|allocs')
echo "== .: allocation tests without -race, RIPTIDE_ENGINE=goroutine"
RIPTIDE_ENGINE=goroutine go test -count=1 -run 'Alloc' -v . | grep -E '^(=== RUN|--- |ok|FAIL|panic)|allocs'
