#!/bin/sh
# run.sh: run the riptide multi-core kit made by bench/mc/pack.sh. Unpack
# and run, on the target (no package registry, no Go needed):
#
#   tar xJf riptide-mc.tar.xz && cd riptide-mc
#   ./run.sh -server-cpus auto:4 -wrk-cpus rest -workloads plaintext,pipelined -out "$OUT/s4"
#   ./run.sh plan16 "$OUT"      # the issue-27 plan for a 16-CPU machine (≈6 min)
#
# Any other arguments go to riptide-bench (see -h), which runs here with
# -prebuilt bin/ (nothing is built) and the packed tools first on PATH.
# Results, raw wrk/h2load output, server logs, topology.txt and run.log go
# to -out DIR (default: results/<date>/ in the kit). With both sets given,
# the harness pins itself to the -wrk-cpus set, so its threads stay off
# the servers' CPUs.
# Only POSIX sh builtins are used: the kit needs nothing from the target's
# PATH.
set -eu
kit=$(cd "${0%/*}" && pwd)
PATH="$kit/tools:$PATH"
export PATH
# c1000, h2idle and idletls open thousands of sockets.
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

bench() {
	"$kit/bin/riptide-bench" -prebuilt "$kit/bin" "$@"
}

if [ "${1:-}" = plan16 ]; then
	# issue 27 on a 16-CPU machine: 4 then 8 server CPUs taken as whole
	# physical cores (auto:N; 0-3 and 0-7 without SMT), the load on every
	# other core (rest); 3 rounds × 5 s, 1 s warm-up. Each step writes its
	# own directory; a failing step does not stop the others.
	out="${2:?usage: run.sh plan16 OUTDIR}"
	shift 2
	rc=0
	# The targets first: pipelined and plaintext × ceiling on 4
	# server CPUs, h2c × h2o on 8; then the other halves.
	bench -server-cpus auto:4 -wrk-cpus rest -workloads plaintext,pipelined \
		-servers riptide,fasthttp,nginx,ceiling -rounds 3 -duration 5s -out "$out/s4-h1" "$@" || rc=1
	bench -server-cpus auto:8 -wrk-cpus rest -workloads h2c \
		-servers riptide,riptide-h2inline,h2o -rounds 3 -duration 5s -out "$out/s8-h2c" "$@" || rc=1
	bench -server-cpus auto:4 -wrk-cpus rest -workloads h2c \
		-servers riptide,riptide-h2inline,h2o -rounds 3 -duration 5s -out "$out/s4-h2c" "$@" || rc=1
	bench -server-cpus auto:8 -wrk-cpus rest -workloads plaintext,pipelined \
		-servers riptide,fasthttp,ceiling -rounds 3 -duration 5s -out "$out/s8-h1" "$@" || rc=1
	exit $rc
fi
bench "$@"
