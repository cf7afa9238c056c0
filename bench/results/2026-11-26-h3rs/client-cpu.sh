#!/bin/bash
# Client vs server CPU per request: h3load-rs against riptide-h3 and quicgo-h3, 3 runs of 3 s each.
cd "$(dirname "$0")/../.."   # the bench module root
for srv in riptide-h3 quicgo-h3; do
  ./bin/$srv -addr 127.0.0.1:18443 2>/dev/null & pid=$!
  sleep 1
  for i in 1 2 3; do
    s0=$(awk '{print $14+$15}' /proc/$pid/stat)
    /usr/bin/time -f 'client_cpu_s %U %S' ./bin/h3load-rs/release/h3load-rs -c 10 -s 10 -d 3 -expect-body 'Hello, World!' https://127.0.0.1:18443/ > /tmp/h3rust-cc.json 2> /tmp/h3rust-cc.time
    s1=$(awk '{print $14+$15}' /proc/$pid/stat)
    req=$(sed 's/.*"requests":\([0-9]*\).*/\1/' /tmp/h3rust-cc.json)
    read _ u s < <(grep client_cpu_s /tmp/h3rust-cc.time)
    echo "$srv run $i: requests $req, client CPU $(echo "($u+$s)*1000000/$req" | bc -l | xargs printf '%.2f') µs/req, server CPU $(echo "($s1-$s0)*10000/$req" | bc -l | xargs printf '%.2f') µs/req"
    cat /tmp/h3rust-cc.json
  done
  kill $pid; wait $pid 2>/dev/null
done
