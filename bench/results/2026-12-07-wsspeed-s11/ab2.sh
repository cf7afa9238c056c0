#!/bin/bash
# ab2.sh: interleaved rounds of riptide-ws-event before (ev0, 24a1c78) and after (ev1, c653dbc) the EAGAIN-read change, wsecho 3 s, server GOMAXPROCS=1 on CPU 0, wsload on CPU 1.
cd /tmp/wsspeed
for r in 1 2 3 4 5; do for b in ev0 ev1; do
  echo "$b round $r (load $(cut -d' ' -f1 /proc/loadavg)): $(./one.sh ./$b wsecho 3s 2>&1 | grep -oE '[0-9]+ msg/s|client CPU [0-9.]+ µs per message, server CPU [0-9.]+ µs' | tr '\n' ' ')"
done; done
