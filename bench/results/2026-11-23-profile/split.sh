#!/bin/bash
# split.sh NAME BIN : per-request CPU split of NAME.pprof (µs per request, sampled)
n=$1; bin=$2
reqs=$(( $(awk '/requests in/{print $1}' $n.warm.txt 2>/dev/null || echo 0) + $(awk '/requests in/{print $1}' $n.wrk.txt) ))
tot() { go tool pprof -top -nodecount=1 "$@" $bin $n.pprof 2>/dev/null | awk '/Showing nodes accounting for/{gsub(",","",$5); v=$5; if (v ~ /ms$/) {sub("ms","",v); v=v/1000} else sub("s","",v); print v; exit}'; }
all=$(go tool pprof -top -nodecount=1 $bin $n.pprof 2>/dev/null | awk '/Total samples/{v=$NF; print v}')
printf "%-12s requests(profiled)=%s total_samples=%s\n" $n $reqs "$(go tool pprof -top -nodecount=1 $bin $n.pprof 2>/dev/null | grep -o 'Total samples = [0-9.a-z]*')"
for cat in "write(2)/writev(2):syscall\.write$|unix\.writev$|unix\.Writev$" "read(2):syscall\.read$" "epoll_wait (loop or runtime netpoll):EpollWait$|epollWait0$|runtime\.netpoll$" "futex (wake/sleep threads):runtime\.futex$" "epoll_ctl:EpollCtl|epollctl" "scheduler (findRunnable/schedule):runtime\.schedule$" "HTTP parse:h1\.\(\*Request\)\.Parse$|fasthttp\.\(\*RequestHeader\)\.parse$|fasthttp\.\(\*Request\)\.parseURI" "handler:\.callHandler$|riptideroutes\.bench$|fastroutes\." "response build (finish/commit/writeHead):\(\*Ctx\)\.finish$|fasthttp\.\(\*Response\)\.Write$" "GC:runtime\.gcBgMarkWorker|runtime\.mallocgc$"; do
  label=${cat%%:*}; re=${cat#*:}
  t=$(tot -focus "$re")
  printf "  %-42s %6.2f µs/req\n" "$label" "$(echo "${t:-0}*1000000/$reqs" | bc -l)"
done
