// Command riptide-compat serves the event store's unchanged http.Handler
// through riptide's compat door, riptide.FromHTTP.
//
//	riptide-compat -addr 127.0.0.1:0 -store sqlite|memory [-db FILE] [-log FILE] [-cpuprofile FILE]
package main

import (
	"context"
	"net"

	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/eventstore/serve"
)

func main() {
	serve.Main(func(e *serve.Env) (func(net.Listener) error, func()) {
		srv := &riptide.Server{Handler: riptide.FromHTTP(e.App.Handler(e.Log))}
		return srv.Serve, func() { srv.Shutdown(context.Background()) }
	})
}
