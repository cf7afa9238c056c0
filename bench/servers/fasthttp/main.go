// Command fasthttp serves the benchmark or probe routes with
// valyala/fasthttp (pinned in bench/go.mod) and its default server settings.
//
//	fasthttp -addr 127.0.0.1:8080 -profile bench
package main

import (
	"github.com/valyala/fasthttp"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/fastroutes"
)

func main() {
	o := benchserver.ParseFlags()
	o.RequireHTTP1("fasthttp") // no HTTP/2 in fasthttp
	srv := &fasthttp.Server{Handler: fastroutes.Handler(o.Profile)}
	benchserver.Main(o, srv.Serve, func() { srv.Shutdown() })
}
