// Command nethttp serves the event store with net/http: the baseline.
// The server is built by serve.Servers["nethttp"].
//
//	nethttp -addr 127.0.0.1:0 -store sqlite|memory [-db FILE] [-log FILE] [-cpuprofile FILE]
package main

import "github.com/riptide-http/riptide/bench/eventstore/serve"

func main() { serve.Main(serve.Servers["nethttp"]) }
