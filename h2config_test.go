package riptide

import (
	"testing"
	"time"
)

// TestHTTP2TimeoutsReachEngine: HTTP2Config's SendPingTimeout and
// PingTimeout and the Server's IdleTimeout are the HTTP/2 engine's;
// internal/h2 proves the rules they set on the engine's clock
// (TestKeepalivePingUnansweredClosesConnection: a silent client is sent a
// PING and closed when it does not answer;
// TestIdleTimeoutSendsGoAwayAndCloses).
func TestHTTP2TimeoutsReachEngine(t *testing.T) {
	t.Parallel()
	const send, timeout, idle = 50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond
	s := &Server{Handler: HandlerFunc(func(*Ctx) {}), IdleTimeout: idle,
		HTTP2: &HTTP2Config{SendPingTimeout: send, PingTimeout: timeout}}
	cfg := &s.h2().cfg
	if cfg.SendPingTimeout != send || cfg.PingTimeout != timeout || cfg.IdleTimeout != idle {
		t.Errorf("the engine's SendPingTimeout %v, PingTimeout %v, IdleTimeout %v; want %v, %v, %v",
			cfg.SendPingTimeout, cfg.PingTimeout, cfg.IdleTimeout, send, timeout, idle)
	}
}
