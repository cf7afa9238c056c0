// Command riptide-nostats is the riptide bench server with
// Server.DisableStats set: run beside "riptide" to measure what the
// per-request statistics cost.
//
//	riptide-nostats -addr 127.0.0.1:8080 -profile bench [-h2c | -tls]
package main

import (
	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/riptideroutes"
)

func main() {
	o := benchserver.ParseFlags()
	srv := &riptide.Server{Handler: riptideroutes.Handler(o.Profile), DisableStats: true}
	benchserver.MainRiptide(o, srv)
}
