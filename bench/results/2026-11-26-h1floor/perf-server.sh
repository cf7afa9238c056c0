#!/bin/bash
# h1f-perf.sh SERVER [wrkargs...]: perf record the server under wrk plaintext load
s=$1; shift; URL=${URL:-http://127.0.0.1:18080/}
/tmp/h1f-bin/$s -addr ${ADDR:-127.0.0.1:18080} -profile bench $EXTRA >/dev/null 2>&1 &
pid=$!
sleep 0.5
perf record -F 4000 -g -o /tmp/h1f-perf.$s.data -p $pid -- sleep 4 >/dev/null 2>&1 &
ppid=$!
wrk -t1 -c50 -d4s $URL | grep -E "Requests/sec"
wait $ppid
kill $pid
