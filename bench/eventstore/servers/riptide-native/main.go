// Command riptide-native serves the event store on riptide with the RPC
// endpoint and its middleware ported to the native API (package
// riptideport); SSE and the metrics route go through riptide.FromHTTP.
// The server is built by serve.Servers["riptide-native"].
//
//	riptide-native -addr 127.0.0.1:0 -store sqlite|memory [-db FILE] [-log FILE] [-cpuprofile FILE]
package main

import "github.com/riptide-http/riptide/bench/eventstore/serve"

func main() { serve.Main(serve.Servers["riptide-native"]) }
