// Command riptide serves the benchmark or probe routes on riptide's native
// API (func(*riptide.Ctx)) with a zero-value riptide.Server.
//
//	riptide -addr 127.0.0.1:8080 -profile bench [-h2c | -tls]
package main

import (
	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/riptideroutes"
)

func main() {
	o := benchserver.ParseFlags()
	srv := &riptide.Server{Handler: riptideroutes.Handler(o.Profile)}
	benchserver.MainRiptide(o, srv)
}
