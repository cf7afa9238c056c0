package bench

import (
	"context"
	"net"

	"github.com/riptide-http/riptide"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/floorroutes"
	"github.com/riptide-http/riptide/bench/internal/riptideroutes"
	"github.com/riptide-http/riptide/bench/internal/stdroutes"
)

// riptideMicroServers returns the riptide servers for the micro-benchmarks.
// riptide-mux and riptide-chi run the net/http handlers through the compat
// door; riptide-floor is the lower bound of its cost.
func riptideMicroServers() []microServer {
	return []microServer{
		{"riptide", func(ln net.Listener) func() {
			s := &riptide.Server{Handler: riptideroutes.Handler(benchserver.ProfileBench)}
			go s.Serve(ln)
			return func() { s.Shutdown(context.Background()) }
		}},
		// riptide-floor: the native routes plus what net/http's contract
		// makes any compat door build per request (floorroutes).
		{"riptide-floor", func(ln net.Listener) func() {
			s := &riptide.Server{Handler: floorroutes.Handler(benchserver.ProfileBench)}
			go s.Serve(ln)
			return func() { s.Shutdown(context.Background()) }
		}},
		{"riptide-mux", func(ln net.Listener) func() {
			s := &riptide.Server{Handler: riptide.FromHTTP(stdroutes.Mux(benchserver.ProfileBench))}
			go s.Serve(ln)
			return func() { s.Shutdown(context.Background()) }
		}},
		{"riptide-chi", func(ln net.Listener) func() {
			s := &riptide.Server{Handler: riptide.FromHTTP(stdroutes.Chi(benchserver.ProfileBench))}
			go s.Serve(ln)
			return func() { s.Shutdown(context.Background()) }
		}},
	}
}
