package http3

// The QUIC configuration derived from the engine's (used by Serve,
// server.go), and a bare accept loop that hands quic-go connections to the
// core's HTTP/3 engine (internal/h3srv) with any stream Handler, for the
// engine's own tests.

import (
	"context"
	"sync"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide/internal/h3srv"
)

// quicConfig returns the quic-go configuration for an engine configured by
// cfg: its stream limits, with stream credit released by the engine only
// after a handler returns (RequireStreamCreditRelease), its timeouts and
// its 0-RTT choice.
func quicConfig(cfg *h3srv.Config) *quic.Config {
	c := cfg.Normalized()
	return &quic.Config{
		MaxIncomingStreams:         int64(c.MaxStreams),
		MaxIncomingUniStreams:      int64(c.MaxUniStreams),
		RequireStreamCreditRelease: true,
		MaxIdleTimeout:             c.IdleTimeout,
		HandshakeIdleTimeout:       c.HandshakeTimeout,
		Allow0RTT:                  c.Allow0RTT,
	}
}

// serveListener serves every connection ln accepts with the engine until
// ln is closed or ctx is done, then waits for the connections' Serve to
// return. The listener must have been made with quicConfig(cfg).
func serveListener(ctx context.Context, ln *quic.Listener, cfg *h3srv.Config, h h3srv.Handler) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	sh := h3srv.NewShared(cfg)
	for {
		qc, err := ln.Accept(ctx)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			h3srv.NewConnShared(conn{qc}, sh, h).Serve()
		}()
	}
}
