#!/bin/bash
# clientab.sh: the harness's two WebSocket clients against one server (gobwas-ws, GOMAXPROCS=1 on CPU 0; wsload on CPU 1), interleaved, 2 s each:
# the epoll client (default) and the goroutine-per-connection client (-goroutines). Client and server CPU per message.
cd /tmp/wsspeed
for r in 1 2 3; do for wl in wsecho wsbroadcast; do for g in "-spin 0" "-goroutines"; do
  echo "$wl $g round $r (load $(cut -d' ' -f1 /proc/loadavg)): $(./one.sh ./gobwas-ws $wl 2s $g 2>&1 | grep -oE '[0-9]+ (msg|deliveries)/s|client CPU [0-9.]+ µs per message, server CPU [0-9.]+ µs' | tr '\n' ' ')"
done; done; done
