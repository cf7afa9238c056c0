package http3

// The hand-over of quic-go connections to the core's HTTP/3 engine
// (internal/h3srv): the QUIC configuration derived from the engine's, and
// the accept loop. Serve and ListenAndServe (issue 25) are to be built on
// these, with the native Ctx and the compat door above the engine's
// Handler once the redesign's exchange lands.

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
	for {
		qc, err := ln.Accept(ctx)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			h3srv.NewConn(conn{qc}, cfg, h).Serve()
		}()
	}
}
