// Command nethttp serves the event store with net/http: the baseline.
//
//	nethttp -addr 127.0.0.1:0 -store sqlite|memory [-db FILE] [-log FILE] [-cpuprofile FILE]
package main

import (
	"context"
	"net"
	"net/http"

	"github.com/riptide-http/riptide/bench/eventstore/serve"
)

func main() {
	serve.Main(func(e *serve.Env) (func(net.Listener) error, func()) {
		srv := &http.Server{Handler: e.App.Handler(e.Log)}
		return srv.Serve, func() { srv.Shutdown(context.Background()) }
	})
}
