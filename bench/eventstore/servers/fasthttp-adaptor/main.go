// Command fasthttp-adaptor serves the event store's unchanged http.Handler
// on fasthttp through fasthttpadaptor.
// The server is built by serve.Servers["fasthttp-adaptor"].
//
//	fasthttp-adaptor -addr 127.0.0.1:0 -store sqlite|memory [-db FILE] [-log FILE] [-cpuprofile FILE]
package main

import "github.com/riptide-http/riptide/bench/eventstore/serve"

func main() { serve.Main(serve.Servers["fasthttp-adaptor"]) }
