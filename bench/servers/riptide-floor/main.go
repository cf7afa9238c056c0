// Command riptide-floor serves the benchmark routes on riptide's native API
// after the per-request work net/http's contract makes any server of an
// http.Handler do (package floorroutes): the lower bound of the compat
// door's cost, run beside riptide and riptide-mux.
//
//	riptide-floor -addr 127.0.0.1:8080 -profile bench [-h2c | -tls]
package main

import (
	"fmt"
	"os"

	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/floorroutes"
)

func main() {
	o := benchserver.ParseFlags()
	if o.Profile == benchserver.ProfileProbe {
		// The probe checks conformance, which the floor adds nothing to.
		fmt.Fprintln(os.Stderr, "riptide-floor: the probe profile is not implemented")
		os.Exit(2)
	}
	srv := &riptide.Server{Handler: floorroutes.Handler(o.Profile)}
	benchserver.MainRiptide(o, srv)
}
