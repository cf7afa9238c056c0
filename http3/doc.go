// Package http3 will hold riptide's HTTP/3 server on quic-go: Serve and
// ListenAndServe over a UDP packet connection, quic-go's transport and
// limits configured from riptide's, and each QUIC connection handed to the
// core module's HTTP/3 logic.
//
// The server is coming (issue 25). Today the module holds the adapters of
// quic-go's connections and streams to the core's internal QUIC interfaces
// (quic.go), the hand-over of connections to the core's HTTP/3 engine
// internal/h3srv (engine.go), and the differential test of riptide's QPACK codec (package
// github.com/riptide-http/riptide/h3) against quic-go's qpack package. It
// is a module of its own so that the core module never depends on quic-go.
package http3
