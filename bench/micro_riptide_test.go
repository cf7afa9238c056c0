package bench

import (
	"context"
	"net"

	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/riptideroutes"
)

// riptideMicroServers returns the riptide servers for the micro-benchmarks.
// The compat door (riptide-mux, riptide-chi) joins when it lands.
func riptideMicroServers() []microServer {
	return []microServer{
		{"riptide", func(ln net.Listener) func() {
			s := &riptide.Server{Handler: riptideroutes.Handler(benchserver.ProfileBench)}
			go s.Serve(ln)
			return func() { s.Shutdown(context.Background()) }
		}},
	}
}
