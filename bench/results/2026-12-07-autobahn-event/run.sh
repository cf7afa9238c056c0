#!/bin/bash
# Whole Autobahn suite (kosoku 0.1.0) against examples/wsecho -mode event
# (websocket.Serve), one engine after the other. Run from a directory
# holding the wsecho binary (go build ./examples/wsecho); reports go under it.
K=~/.cache/riptide/kosoku-venv/bin/kosoku
port=9301
for engine in eventloop goroutine; do
	name=event-$engine
	./wsecho -addr 127.0.0.1:$port -mode event -engine $engine > server-$name.log 2>&1 &
	spid=$!
	sleep 1
	s=$(date +%s)
	echo "$(date -u +%FT%TZ) start $name: kosoku -m fuzzingclient -p 2 -o full-$name 127.0.0.1:$port" >> timings.log
	timeout 1500 $K -m fuzzingclient -p 2 -o full-$name 127.0.0.1:$port > kosoku-$name.log 2>&1
	echo "$(date -u +%FT%TZ) end $name rc=$? $(( $(date +%s)-s ))s" >> timings.log
	kill $spid
	port=$((port+1))
done
