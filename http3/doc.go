// Package http3 serves HTTP/3 for a riptide.Server on quic-go:
//
//	srv := &riptide.Server{Handler: h, TLSConfig: tlsConf}
//	go srv.ListenAndServeTLS(":443", "", "")
//	err := http3.ListenAndServe(srv, ":443", nil, nil)
//
// Serve and ListenAndServe run quic-go's Transport (a stateless reset key,
// a token key, Retry under load) and hand each QUIC connection to the
// Server through the core's exported seam (riptide.Server.ListenQUIC, a
// riptide.QUICListener), whose HTTP/3 engine serves its request streams
// to the Server's handler, native or compat, through the same Ctx as
// HTTP/1.1 and HTTP/2. The package imports no internal package of the
// core module, so it versions on its own. The Server's limits, Stats, ConnState,
// Shutdown, Drain and Close cover the HTTP/3 connections, and its HTTP/1.1
// and HTTP/2 responses over TLS advertise HTTP/3 with Alt-Svc while Serve
// runs.
//
// The package is also an HTTP/3 client: Transport carries the requests of
// a client.Client (github.com/riptide-http/riptide/client) over quic-go,
// one connection per origin, framed by riptide's h3 codec. NewClient
// returns a client.Client that speaks HTTP/3 to every https origin (the
// native Do API with reused client.Request and client.Response, and
// RoundTrip); a client.Client whose HTTP3 field holds a Transport moves
// an origin to HTTP/3 when it offers it in Alt-Svc:
//
//	c := http3.NewClient(&http3.Transport{})
//	err := c.Do(ctx, &req, &resp)
//	hc := &http.Client{Transport: c}
//
// See docs/client.md.
//
// The module also holds the adapters of quic-go's connections and streams
// to the core's QUIC interfaces, package
// github.com/riptide-http/riptide/quicx (quic.go), and the differential
// test of riptide's QPACK codec (package
// github.com/riptide-http/riptide/h3) against quic-go's qpack package. It
// is a module of its own so that the core module never depends on
// quic-go. See docs/http3.md.
package http3
