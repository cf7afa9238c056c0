package riptide_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"golang.org/x/net/http2"
)

// TestH2KeepalivePing checks HTTP2Config.SendPingTimeout and PingTimeout:
// a silent client is sent a PING, and its connection is closed when it
// does not answer.
func TestH2KeepalivePing(t *testing.T) {
	t.Parallel()
	in, _ := startRiptideH2(t, riptide.HandlerFunc(func(*riptide.Ctx) {}), func(s *riptide.Server) {
		s.HTTP2.SendPingTimeout = 50 * time.Millisecond
		s.HTTP2.PingTimeout = 100 * time.Millisecond
	})
	a := newH2Attacker(t, in, 0)
	pings := 0
	for {
		f, err := a.fr.ReadFrame()
		if err != nil {
			var ne net.Error
			if pings == 0 || errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("%v after %d PINGs; want a PING, then the connection closed", err, pings)
			}
			return // closed after the unanswered PING
		}
		if p, ok := f.(*http2.PingFrame); ok && !p.IsAck() {
			pings++
		}
	}
}
