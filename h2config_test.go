package riptide

import (
	"testing"
	"time"
)

// TestHTTP2PingTimeoutsReachEngine: HTTP2Config's SendPingTimeout and
// PingTimeout are the engine's; internal/h2 proves the rule they set
// (TestKeepalivePingUnansweredClosesConnection: a silent client is sent a
// PING and closed when it does not answer).
func TestHTTP2PingTimeoutsReachEngine(t *testing.T) {
	t.Parallel()
	const send, timeout = 50 * time.Millisecond, 100 * time.Millisecond
	s := &Server{Handler: HandlerFunc(func(*Ctx) {}), HTTP2: &HTTP2Config{SendPingTimeout: send, PingTimeout: timeout}}
	if cfg := &s.h2().cfg; cfg.SendPingTimeout != send || cfg.PingTimeout != timeout {
		t.Errorf("the engine's SendPingTimeout %v and PingTimeout %v, want %v and %v", cfg.SendPingTimeout, cfg.PingTimeout, send, timeout)
	}
}
