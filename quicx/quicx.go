// Package quicx declares the QUIC connection and streams riptide's HTTP/3
// server is written against, so that the core module never imports a QUIC
// implementation. It is the QUIC half of the seam between the core and a
// QUIC stack: the http3 module (github.com/riptide-http/riptide/http3)
// adapts quic-go's *quic.Conn, *quic.Stream, *quic.ReceiveStream and
// *quic.SendStream to these interfaces and hands each connection to a
// riptide.QUICListener (riptide.Server.ListenQUIC); another QUIC stack may
// do the same. Applications serving HTTP/3 use the http3 module and need
// nothing here.
//
// The methods are the subset of quic-go's the HTTP/3 layer needs, with
// error codes and stream IDs as plain integers. An adapter is a struct of
// one pointer (such a struct is stored in an interface without allocating)
// whose methods convert the codes: wrapping a stream costs nothing per
// request.
//
// internal/h3srv, the core's HTTP/3 engine, is written against it;
// internal/quicxtest is an in-memory implementation for its tests.
package quicx

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// ReceiveStream is the receiving half of a stream: a request stream's, or
// a unidirectional stream the peer opened (control, QPACK).
type ReceiveStream interface {
	StreamID() int64
	// Read reads stream data; io.EOF after the peer's FIN, a stream
	// error after its RESET_STREAM.
	Read(p []byte) (int, error)
	// CancelRead sends STOP_SENDING with an HTTP/3 error code.
	CancelRead(code uint64)
	SetReadDeadline(t time.Time) error
	// SetReceiveFinalSizeCallback sets f to be called once the peer's FIN
	// or RESET_STREAM has fixed the stream's final size, at once if it is
	// known already; f runs on the QUIC layer's own goroutine and must not
	// block. It is not called if the connection closes first; nil removes
	// it.
	SetReceiveFinalSizeCallback(f func(size int64))
	// ReleaseStreamCredit lets the peer open another stream in place of
	// this one, once it has completed (with the QUIC layer configured to
	// require it: a server releases credit when the handler returns, so
	// that reset streams do not let handlers pile up).
	ReleaseStreamCredit()
}

// SendStream is the sending half of a stream: a request stream's, or a
// unidirectional stream of this side (control, QPACK).
type SendStream interface {
	StreamID() int64
	Write(p []byte) (int, error)
	// Close ends the stream with a FIN.
	Close() error
	// CancelWrite sends RESET_STREAM with an HTTP/3 error code.
	CancelWrite(code uint64)
	SetWriteDeadline(t time.Time) error
}

// Stream is a bidirectional stream: a request stream.
type Stream interface {
	ReceiveStream
	SendStream
	// Context is done when the sending half can no longer be used: the
	// peer asked to stop it (STOP_SENDING, as a client's reset does), it
	// was closed or cancelled, or the connection closed. A server hands
	// its Done channel to a handler as the reset notification.
	Context() context.Context
}

// State is what the HTTP/3 layer needs of a connection's state.
type State struct {
	TLS tls.ConnectionState
	// Used0RTT reports 0-RTT data accepted on the connection: until
	// HandshakeComplete, requests may be replays.
	Used0RTT bool
}

// Conn is a QUIC connection.
type Conn interface {
	// AcceptStream returns the next request stream the peer opened, or
	// an error once ctx is done or the connection is closed.
	AcceptStream(ctx context.Context) (Stream, error)
	// AcceptUniStream returns the next unidirectional stream the peer
	// opened, or an error once ctx is done or the connection is closed.
	AcceptUniStream(ctx context.Context) (ReceiveStream, error)
	// OpenUniStream opens a unidirectional stream (control, QPACK).
	OpenUniStream() (SendStream, error)
	// CloseWithError closes the connection with an HTTP/3 error code.
	CloseWithError(code uint64, reason string) error
	// Context is done when the connection is closed.
	Context() context.Context
	// HandshakeComplete is closed when the handshake completes.
	HandshakeComplete() <-chan struct{}
	State() State
	LocalAddr() net.Addr
	RemoteAddr() net.Addr
}
