// Command riptide-mux serves the benchmark or probe routes through riptide's
// net/http compat door: the very handlers the nethttp server runs, on an
// http.ServeMux, wrapped with riptide.FromHTTP.
//
//	riptide-mux -addr 127.0.0.1:8080 -profile bench [-h2c | -tls]
package main

import (
	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/stdroutes"
)

func main() {
	o := benchserver.ParseFlags()
	srv := &riptide.Server{Handler: riptide.FromHTTP(stdroutes.Mux(o.Profile))}
	benchserver.MainRiptide(o, srv)
}
