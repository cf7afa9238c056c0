// Package h3hook joins the http3 module to the riptide root package's HTTP/3
// adapter without exported API on the root. The root package sets Bind in
// its init; the http3 module imports the root (its Serve takes a
// *riptide.Server), so that init has run by the time it calls Bind. The
// module may import this package because internal/ is checked by import
// path, and the module's path is below the root's.
//
// The root implements Server for a *riptide.Server: the engine's
// configuration mapped from the Server's limits, admission under MaxConns,
// each connection served with a native Ctx per stream (the compat door
// being a Handler on the Ctx) and counted in Stats, ConnState, Shutdown,
// Drain, Close, MaxConnAge and MaxRequestsPerConn, and Alt-Svc on the
// HTTP/1.1 and HTTP/2 responses while a listener runs.
package h3hook

import (
	"time"

	"github.com/riptide-http/riptide/internal/h3srv"
	"github.com/riptide-http/riptide/internal/quicx"
)

// Bind returns the HTTP/3 side of srv, a *riptide.Server; set by the root
// package's init.
var Bind func(srv any) Server

// Server is what the http3 module uses of a riptide.Server.
type Server interface {
	// Config returns the engine configuration the Server's limits map to
	// (MaxHeaderBytes, ReadHeaderTimeout, IdleTimeout, WriteTimeout; the handshake
	// bounded by ReadHeaderTimeout; MaxStreams from
	// HTTP2.MaxConcurrentStreams when set). The caller may adjust it (its
	// HTTP/3 options) before passing it to Listen.
	Config() h3srv.Config
	// ReceiveWindows returns the request body bytes one stream and one
	// connection may have buffered, as HTTP2Config's receive buffers
	// (default 1 MiB each), for the QUIC flow-control windows.
	ReceiveWindows() (stream, conn int64)
	// MaxConns returns the Server's MaxConns (0: no limit).
	MaxConns() int
	// Listen registers a running listener on UDP port whose connections
	// are served with cfg. closeFn stops it (Shutdown and Close call it).
	// Until Listener.Close, the Server's HTTP/1.1 and HTTP/2 responses
	// carry Alt-Svc: h3=":port"; ma=maxAge (not while draining). It fails
	// with riptide.ErrServerClosed once the Server is shut down.
	Listen(port int, maxAge time.Duration, cfg *h3srv.Config, closeFn func()) (Listener, error)
}

// Listener is one registered HTTP/3 listener of a Server.
type Listener interface {
	// Admit reserves a connection slot for a connection attempt, under
	// MaxConns (counted in Stats.Refused when refused). Release, called
	// once per slot reserved, frees one when the attempt ends: the
	// connection closed, or the handshake failed.
	Admit() bool
	Release()
	// ServeConn serves an accepted connection until it closes: counted
	// in Stats and ConnState, sent GOAWAY by Shutdown and Drain, closed
	// by Close, MaxConnAge and MaxRequestsPerConn applied.
	ServeConn(qc quicx.Conn)
	// Close unregisters the listener (Alt-Svc is no longer sent).
	Close()
}
