#!/bin/sh
# System calls per request of the benchmark process (perf stat tracepoints
# over a fixed iteration count). loopback: against the shared ceiling
# server ($CEIL), whose own calls are not counted; inproc: the fasthttp
# server's calls are counted too, alike for all. Usage: syscalls.sh
set -u
n=20000
for b in old main new; do
  for bench in SequentialGET GETHeaders POST1K; do
    for srv in loopback inproc; do
      if [ $srv = loopback ]; then env="CLIENTBENCH_ADDR=$CEIL"; else env="CLIENTBENCH_SERVER=inproc"; fi
      printf '%-5s %-14s %-9s' $b $bench $srv
      env $env perf stat -x, -e 'raw_syscalls:sys_enter,syscalls:sys_enter_write,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom,syscalls:sys_enter_epoll_pwait' \
        /tmp/cr/$b.test -test.run '^$' -test.bench "$bench/client=riptide\$" -test.cpu 1 -test.benchtime ${n}x 2>&1 >/dev/null |
        awk -F, -v n=$n '{split($3,a,":"); sub("sys_enter_","",a[2]); sub("sys_enter","all",a[2]); printf " %s=%.2f", a[2], $1/n}'
      echo
    done
  done
done
