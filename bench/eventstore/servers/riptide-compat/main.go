// Command riptide-compat serves the event store's unchanged http.Handler
// through riptide's compat door, riptide.FromHTTP.
// The server is built by serve.Servers["riptide-compat"].
//
//	riptide-compat -addr 127.0.0.1:0 -store sqlite|memory [-db FILE] [-log FILE] [-cpuprofile FILE]
package main

import "github.com/riptide-http/riptide/bench/eventstore/serve"

func main() { serve.Main(serve.Servers["riptide-compat"]) }
