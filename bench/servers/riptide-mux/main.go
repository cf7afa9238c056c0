// Command riptide-mux serves the benchmark or probe routes through riptide's
// net/http compat door: the very handlers the nethttp server runs, on an
// http.ServeMux, wrapped with riptide.FromHTTP. With -reuse the door
// reuses the request objects (riptide.CompatOptions.ReuseRequests; the
// routes keep nothing of a request after it).
//
//	riptide-mux -addr 127.0.0.1:8080 -profile bench [-h2c | -tls] [-reuse]
package main

import (
	"flag"

	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/stdroutes"
)

func main() {
	reuse := flag.Bool("reuse", false, "reuse the request objects between requests (riptide.CompatOptions.ReuseRequests)")
	o := benchserver.ParseFlags()
	opts := riptide.CompatOptions{ReuseRequests: *reuse}
	srv := &riptide.Server{Handler: riptide.FromHTTPWith(stdroutes.Mux(o.Profile), opts)}
	benchserver.MainRiptide(o, srv)
}
