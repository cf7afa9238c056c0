package http3

// The quic-go configuration for a riptide.QUICListener's limits (used by
// Serve, server.go).

import (
	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide"
)

// quicConfig returns the quic-go configuration for the limits lim: its
// stream limits, with stream credit released by the core's engine only
// after a handler returns (RequireStreamCreditRelease), its timeouts, its
// 0-RTT choice and, when set, its receive windows.
func quicConfig(lim riptide.QUICLimits) *quic.Config {
	c := &quic.Config{
		MaxIncomingStreams:         int64(lim.MaxStreams),
		MaxIncomingUniStreams:      int64(lim.MaxUniStreams),
		RequireStreamCreditRelease: true,
		MaxIdleTimeout:             lim.IdleTimeout,
		HandshakeIdleTimeout:       lim.HandshakeTimeout,
		Allow0RTT:                  lim.Allow0RTT,
	}
	if lim.StreamReceiveWindow > 0 && lim.ConnReceiveWindow > 0 {
		setWindows(c, lim.StreamReceiveWindow, lim.ConnReceiveWindow)
	}
	return c
}

// setWindows bounds the QUIC receive windows: the request body a stream
// and a connection may have buffered before the handlers read it.
func setWindows(c *quic.Config, stream, conn int64) {
	const initial = 512 << 10 // quic-go's initial windows, grown by auto-tuning up to the max
	c.MaxStreamReceiveWindow = uint64(stream)
	c.InitialStreamReceiveWindow = uint64(min(stream, initial))
	c.MaxConnectionReceiveWindow = uint64(conn)
	c.InitialConnectionReceiveWindow = uint64(min(conn, initial))
}
