// Command quicgo-h3 serves the HTTP/3 benchmark routes with quic-go's
// http3.Server (its defaults) and an http.ServeMux: the peer riptide's
// HTTP/3 server is compared with.
//
//	quicgo-h3 -addr 127.0.0.1:8443
package main

import (
	"crypto/tls"
	"net"

	"github.com/quic-go/quic-go/http3"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/stdroutes"
)

func main() {
	o := benchserver.ParseFlags()
	srv := &http3.Server{Handler: stdroutes.H3()}
	benchserver.MainH3(o, func(pc net.PacketConn, tlsConf *tls.Config) error {
		srv.TLSConfig = http3.ConfigureTLSConfig(tlsConf)
		return srv.Serve(pc)
	}, func() { srv.Close() })
}
