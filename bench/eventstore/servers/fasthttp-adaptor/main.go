// Command fasthttp-adaptor serves the event store's unchanged http.Handler
// on fasthttp through fasthttpadaptor.
//
//	fasthttp-adaptor -addr 127.0.0.1:0 -store sqlite|memory [-db FILE] [-log FILE] [-cpuprofile FILE]
package main

import (
	"net"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/riptide-http/riptide/bench/eventstore/serve"
)

func main() {
	serve.Main(func(e *serve.Env) (func(net.Listener) error, func()) {
		srv := &fasthttp.Server{Handler: fasthttpadaptor.NewFastHTTPHandler(e.App.Handler(e.Log))}
		return srv.Serve, func() { srv.Shutdown() }
	})
}
