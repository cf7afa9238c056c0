// Command riptide-h3 serves the HTTP/3 benchmark routes with riptide's
// HTTP/3 server (http3.Serve), through the native door
// (func(*riptide.Ctx), the default) or the compat door (-door compat:
// riptide.FromHTTP with the http.ServeMux quic-go's server runs).
//
//	riptide-h3 -addr 127.0.0.1:8443 [-door native|compat]
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/http3"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/riptideroutes"
	"github.com/riptide-http/riptide/bench/internal/stdroutes"
)

func main() {
	door := flag.String("door", "native", "native (func(*riptide.Ctx)) or compat (riptide.FromHTTP with http.ServeMux)")
	o := benchserver.ParseFlags()
	srv := &riptide.Server{}
	switch *door {
	case "native":
		srv.Handler = riptideroutes.H3()
	case "compat":
		srv.Handler = riptide.FromHTTP(stdroutes.H3())
	default:
		fmt.Fprintf(os.Stderr, "unknown -door %q (want native or compat)\n", *door)
		os.Exit(2)
	}
	benchserver.MainH3(o, func(pc net.PacketConn, tlsConf *tls.Config) error {
		return http3.Serve(srv, pc, tlsConf, nil)
	}, func() { srv.Shutdown(context.Background()) })
}
