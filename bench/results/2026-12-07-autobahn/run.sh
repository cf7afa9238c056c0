#!/bin/bash
# Run from a directory holding wsecho (go build ./examples/wsecho) and
# websocket.test (go test -c ./websocket); reports go under it.
# Whole Autobahn suite (kosoku 0.1.0) against wsecho, one door at a time.
cd /tmp/ab
K=~/.cache/riptide/kosoku-venv/bin/kosoku
port=9201
for door in "native eventloop" "native goroutine" "compat eventloop"; do
	set -- $door
	name=$1-$2
	./wsecho -addr 127.0.0.1:$port -mode $1 -engine $2 > server-$name.log 2>&1 &
	spid=$!
	sleep 1
	s=$(date +%s)
	echo "$(date -u +%FT%TZ) start $name: kosoku -m fuzzingclient -p 2 -o full-$name 127.0.0.1:$port" >> full.log
	timeout 1500 $K -m fuzzingclient -p 2 -o full-$name 127.0.0.1:$port > kosoku-$name.log 2>&1
	echo "$(date -u +%FT%TZ) end $name rc=$? $(( $(date +%s)-s ))s" >> full.log
	kill $spid
	port=$((port+1))
done
s=$(date +%s)
echo "$(date -u +%FT%TZ) start client: RIPTIDE_AUTOBAHN_FULL=/tmp/ab/clientfull websocket.test -test.run TestAutobahnClient" >> full.log
RIPTIDE_AUTOBAHN_FULL=/tmp/ab/clientfull ./websocket.test -test.run 'TestAutobahnClient$' -test.v -test.timeout 25m > client.log 2>&1
echo "$(date -u +%FT%TZ) end client rc=$? $(( $(date +%s)-s ))s" >> full.log
