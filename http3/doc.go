// Package http3 serves HTTP/3 for a riptide.Server on quic-go:
//
//	srv := &riptide.Server{Handler: h, TLSConfig: tlsConf}
//	go srv.ListenAndServeTLS(":443", "", "")
//	err := http3.ListenAndServe(srv, ":443", nil, nil)
//
// Serve and ListenAndServe run quic-go's Transport (a stateless reset key,
// a token key, Retry under load) and hand each QUIC connection to the core
// module's HTTP/3 engine (internal/h3srv), which serves its request
// streams to the Server's handler, native or compat, through the same
// Ctx as HTTP/1.1 and HTTP/2. The Server's limits, Stats, ConnState,
// Shutdown, Drain and Close cover the HTTP/3 connections, and its HTTP/1.1
// and HTTP/2 responses over TLS advertise HTTP/3 with Alt-Svc while Serve
// runs.
//
// The module also holds the adapters of quic-go's connections and streams
// to the core's internal QUIC interfaces (quic.go) and the differential
// test of riptide's QPACK codec (package
// github.com/riptide-http/riptide/h3) against quic-go's qpack package. It
// is a module of its own so that the core module never depends on
// quic-go. See docs/http3.md.
package http3
