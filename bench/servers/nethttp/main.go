// Command nethttp serves the benchmark or probe routes with net/http and an
// http.ServeMux. It is the baseline every ratio is computed against.
//
//	nethttp -addr 127.0.0.1:8080 -profile bench [-h2c | -tls]
package main

import (
	"context"
	"net/http"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/stdroutes"
)

func main() {
	o := benchserver.ParseFlags()
	srv := &http.Server{Handler: stdroutes.Mux(o.Profile)}
	benchserver.ConfigureNetHTTP(srv, o)
	benchserver.Main(o, o.Serve(srv.Serve, srv.ServeTLS), func() { srv.Shutdown(context.Background()) })
}
