package websocket

import (
	"crypto/tls"
	"net/http"
	"time"

	"github.com/riptide-http/riptide/ws"
)

// Defaults of Options.
const (
	DefaultReadLimit    = 1 << 20 // bytes of one message, after decompression
	DefaultBufferSize   = 4096    // read and write buffer of a Conn
	DefaultCloseTimeout = 5 * time.Second
)

// Options configure a server's upgrade (Upgrade, Accept) or a client's Dial.
// The zero value (or nil) is valid: no subprotocol, no compression, the
// defaults above, same-origin requests only.
type Options struct {
	// Subprotocols are the subprotocols this side speaks, in order of
	// preference. A server picks the first one the client offered; a
	// client offers them all.
	Subprotocols []string
	// Compression negotiates permessage-deflate (RFC 7692): a server
	// accepts a client's offer, a client makes one.
	Compression bool
	// Deflate is the server's context-takeover policy (see
	// ws.DeflateConfig; the zero value asks for no takeover either way,
	// which holds no compression state on an idle connection). A client
	// honours whatever the server answers.
	Deflate ws.DeflateConfig
	// CompressionThreshold is the shortest message WriteMessage
	// compresses when permessage-deflate is on; 0 compresses every
	// message (as gorilla/websocket does). Short messages rarely shrink.
	CompressionThreshold int
	// ReadLimit bounds one message after decompression (and one frame);
	// 0 means DefaultReadLimit, negative means no limit.
	ReadLimit int64
	// ReadBufferSize and WriteBufferSize are the Conn's buffer sizes (0:
	// DefaultBufferSize).
	ReadBufferSize, WriteBufferSize int
	// ReadTimeout (0: none) bounds the wait for each message: from the
	// moment a read starts waiting for it (or the last control frame
	// between messages) until its last byte. An idle connection with no
	// ping from the peer, or a message dripping in too slowly, fails the
	// read with a timeout and the connection is closed.
	ReadTimeout time.Duration
	// PingInterval (0: none) sends a ping whenever that long has passed
	// since the last one, from a timer (no goroutine while waiting). With
	// ReadTimeout above it, a peer that answers stays connected while idle
	// and one that vanished is dropped.
	PingInterval time.Duration
	// CloseTimeout bounds the wait for the peer's close frame and the
	// writes of control frames (0: DefaultCloseTimeout).
	CloseTimeout time.Duration
	// CheckOrigin (server) decides whether a request with an Origin header
	// may upgrade. nil allows a missing Origin and one whose host is the
	// request's Host, and refuses cross-origin requests with 403, so that
	// a page elsewhere cannot talk to this server with its visitor's
	// cookies.
	CheckOrigin func(origin, host string) bool
	// TLSClientConfig (client) configures wss:// connections (nil: the
	// defaults, with the URL's host as ServerName).
	TLSClientConfig *tls.Config
	// HTTP2 (client) makes Dial open the WebSocket as an extended CONNECT
	// over HTTP/2 (RFC 8441), on a connection of its own: TLS with ALPN
	// h2 for wss://, cleartext HTTP/2 with prior knowledge for ws://. The
	// server must allow it (SETTINGS_ENABLE_CONNECT_PROTOCOL; riptide's
	// HTTP2Config.EnableConnectProtocol); it answers 200, not 101.
	HTTP2 bool
	// Header (client) is added to the handshake request; a server's
	// response headers go through ResponseHeader.
	Header http.Header
	// ResponseHeader (server) is added to the 101 response.
	ResponseHeader http.Header
	// WriteQueueLimit bounds the bytes an event-driven connection (Serve)
	// queues for a peer that does not read them as fast as they are
	// written (0: DefaultWriteQueueLimit). A write while that much is
	// queued fails with ErrWriteQueueFull and the connection is closed,
	// so a client that stops reading costs at most the limit plus the
	// last message written to it.
	WriteQueueLimit int
}

// DefaultWriteQueueLimit is Options.WriteQueueLimit's default.
const DefaultWriteQueueLimit = 256 << 10

func (o *Options) writeQueueLimit() int {
	if o == nil || o.WriteQueueLimit <= 0 {
		return DefaultWriteQueueLimit
	}
	return o.WriteQueueLimit
}

func (o *Options) readLimit() int64 {
	switch {
	case o == nil || o.ReadLimit == 0:
		return DefaultReadLimit
	case o.ReadLimit < 0:
		return 0
	}
	return o.ReadLimit
}

func (o *Options) readBufferSize() int {
	if o == nil || o.ReadBufferSize <= 0 {
		return DefaultBufferSize
	}
	return max(o.ReadBufferSize, 256)
}

func (o *Options) writeBufferSize() int {
	if o == nil || o.WriteBufferSize <= 0 {
		return DefaultBufferSize
	}
	return max(o.WriteBufferSize, 256)
}

func (o *Options) closeTimeout() time.Duration {
	if o == nil || o.CloseTimeout <= 0 {
		return DefaultCloseTimeout
	}
	return o.CloseTimeout
}
