// Package h3srv is riptide's HTTP/3 server engine: the connection and
// stream logic of RFC 9114 on a QUIC connection given as the quicx
// interfaces. It reads the peer's control and QPACK streams, serves each
// request stream to a Handler as a *Stream (the request head as an
// h1.Request, a body reader, response writes), and enforces the limits an
// HTTP/3 server needs against a hostile client.
//
// It imports the sans-I/O codec (h3), h1 and quicx, and nothing of the
// riptide root package or net/http: like the HTTP/2 engine planned in
// internal/h2, it is the protocol below, and the root maps a Stream to a
// Ctx or to net/http types above. The name is h3srv, not h3, because h3 is
// the public codec this engine is built on.
//
//	c := h3srv.NewConn(qc, &h3srv.Config{}, handler)
//	err := c.Serve() // returns when the connection is closed
package h3srv

import (
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h3"
)

// Config holds an engine's limits. A zero field takes its default. Some
// fields are for the QUIC layer, which the caller configures with them;
// the engine does not enforce those itself.
type Config struct {
	// MaxHeaderBytes bounds a request's (and trailers') field section:
	// the HEADERS frame's length, checked before its payload is read, and
	// the decoded size (RFC 9114 §4.2.2), advertised to the peer as
	// SETTINGS_MAX_FIELD_SECTION_SIZE. Beyond it the request is answered
	// 431. Default 64 KiB.
	MaxHeaderBytes int
	// HeaderBudget bounds the bytes of HEADERS payloads being read on one
	// connection at once: a stream reserves its frame's length before
	// reading the payload and returns it once decoded; a stream that finds
	// the budget spent is refused with H3_REQUEST_REJECTED. It keeps
	// streams that send part of a HEADERS frame and stall from holding
	// MaxHeaderBytes each. Default 1 MiB (at least MaxHeaderBytes).
	HeaderBudget int
	// ReadHeaderTimeout bounds the time from a request stream's
	// acceptance to its complete HEADERS; the stream is then reset with
	// H3_REQUEST_INCOMPLETE. Zero: no limit beyond the QUIC idle timeout.
	ReadHeaderTimeout time.Duration
	// WriteTimeout bounds each write of a response on a request stream
	// (the wait for the client's flow control included), unless the
	// handler set the stream's write deadline (SetWriteDeadline). A write
	// that times out resets the stream with H3_INTERNAL_ERROR, so that
	// later writes fail at once. Zero: no limit.
	WriteTimeout time.Duration
	// MaxUniStreams bounds the peer's unidirectional streams: the QUIC
	// layer's concurrent limit (for the caller to set), and the number of
	// streams of unknown type (grease) the engine accepts, each stopped
	// with H3_STREAM_CREATION_ERROR, over the connection's life: beyond
	// it, H3_EXCESSIVE_LOAD closes the connection. Default 8.
	MaxUniStreams int
	// MaxSettingsBytes bounds the peer's SETTINGS frame. Default 8 KiB;
	// more is H3_EXCESSIVE_LOAD.
	MaxSettingsBytes int
	// MaxPriorityUpdateBytes bounds a PRIORITY_UPDATE frame. Default 1 KiB.
	MaxPriorityUpdateBytes int
	// MaxStreams is the QUIC layer's limit on concurrent request streams,
	// for the caller to set with the stream credit released only when the
	// engine calls ReleaseStreamCredit (after the handler returns), so
	// that reset streams cannot pile up handlers. Default 100.
	MaxStreams int
	// IdleTimeout and HandshakeTimeout are the QUIC layer's, for the
	// caller to set. Defaults 30 s and 10 s.
	IdleTimeout, HandshakeTimeout time.Duration
	// Allow0RTT lets the QUIC layer accept 0-RTT data (for the caller to
	// set; default false). Whatever its value, a request that arrives
	// before the handshake completed on a connection that used 0-RTT runs
	// only if its method is safe (GET, HEAD, OPTIONS); others are
	// answered 425 Too Early, or wait for the handshake with Wait0RTT.
	Allow0RTT bool
	// Wait0RTT makes an unsafe request received as 0-RTT wait for the
	// handshake to complete instead of being answered 425.
	Wait0RTT bool
	// EnableConnectProtocol sends SETTINGS_ENABLE_CONNECT_PROTOCOL=1 and
	// accepts extended CONNECT requests (RFC 9220, :protocol with
	// :scheme, :path and :authority); without it a request with
	// :protocol is malformed.
	EnableConnectProtocol bool

	// BytesIn and BytesOut, when set, count the bytes the engine reads
	// from and writes to the connection's streams (every stream, frames
	// with their headers; not QUIC's own framing).
	BytesIn, BytesOut *atomic.Uint64
}

// Config defaults.
const (
	DefaultMaxHeaderBytes   = 64 << 10
	DefaultHeaderBudget     = 1 << 20
	DefaultMaxUniStreams    = 8
	DefaultMaxStreams       = 100
	DefaultIdleTimeout      = 30 * time.Second
	DefaultHandshakeTimeout = 10 * time.Second
)

// norm returns c with defaults filled in.
func (c *Config) norm() Config {
	var o Config
	if c != nil {
		o = *c
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.HeaderBudget <= 0 {
		o.HeaderBudget = DefaultHeaderBudget
	}
	o.HeaderBudget = max(o.HeaderBudget, o.MaxHeaderBytes)
	if o.MaxUniStreams <= 0 {
		o.MaxUniStreams = DefaultMaxUniStreams
	}
	if o.MaxSettingsBytes <= 0 {
		o.MaxSettingsBytes = int(h3.DefaultLimits.MaxSettingsBytes)
	}
	if o.MaxPriorityUpdateBytes <= 0 {
		o.MaxPriorityUpdateBytes = int(h3.DefaultLimits.MaxPriorityUpdateBytes)
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return o
}

// Normalized returns the configuration with every default filled in, as
// the engine uses it (and as the caller configures the QUIC layer with).
func (c *Config) Normalized() Config { return c.norm() }

// limits returns the codec limits of the configuration.
func (c *Config) limits() h3.Limits {
	return h3.Limits{
		MaxSettingsBytes:       uint64(c.MaxSettingsBytes),
		MaxPriorityUpdateBytes: uint64(c.MaxPriorityUpdateBytes),
		MaxHeadersBytes:        uint64(c.MaxHeaderBytes),
	}
}

// Handler serves request streams.
type Handler interface {
	// ServeStream serves one request: the head is read and valid; the
	// body is read through s. The stream may not be used after
	// ServeStream returns: the engine then ends the response (a 200 with
	// no body if nothing was written), stops reading what is left of the
	// body, and reuses s.
	ServeStream(s *Stream)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(*Stream)

// ServeStream calls f(s).
func (f HandlerFunc) ServeStream(s *Stream) { f(s) }
