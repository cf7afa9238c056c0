// Command fasthttp-native serves the event store on fasthttp with the RPC
// endpoint and its middleware ported natively (package fastport); SSE and
// the metrics route stay on fasthttpadaptor.
// The server is built by serve.Servers["fasthttp-native"].
//
//	fasthttp-native -addr 127.0.0.1:0 -store sqlite|memory [-db FILE] [-log FILE] [-cpuprofile FILE]
package main

import "github.com/riptide-http/riptide/bench/eventstore/serve"

func main() { serve.Main(serve.Servers["fasthttp-native"]) }
