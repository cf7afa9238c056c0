package h2

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

// TestKeepalivePingUnansweredClosesConnection: after SendPingTimeout
// without a frame from the client the server sends a PING, and a client
// that does not acknowledge it within PingTimeout has its connection
// closed. The timers are the subject, so the connection runs in a synctest
// bubble on net.Pipe: its clock is exact, the PING comes SendPingTimeout
// after the client's last frame and the close PingTimeout after the PING.
func TestKeepalivePingUnansweredClosesConnection(t *testing.T) {
	const send, timeout = 50 * time.Millisecond, 100 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		srv, cli := net.Pipe()
		hc := NewConn(&Config{Handler: nopHandler{}, SendPingTimeout: send, PingTimeout: timeout}, srv, nil, nil, nil)
		served := make(chan struct{})
		go func() {
			defer close(served)
			hc.Serve(false, nil)
		}()
		defer func() { cli.Close(); <-served }()
		start := time.Now()
		go func() { _, _ = cli.Write(rawSeq([]byte(Preface), rawFrame(4, 0, 0))) }()
		// A bound on a hang, on the bubble's clock: the close is due
		// at send+timeout.
		_ = cli.SetReadDeadline(start.Add(10 * time.Second))
		var pings []time.Duration // when each PING from the server came
		for {
			var h [9]byte
			_, err := io.ReadFull(cli, h[:])
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("the connection is still open %v after a PING went unanswered (PINGs at %v)", time.Since(start), pings)
				}
				break // closed by the server
			}
			p := make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))
			if _, err := io.ReadFull(cli, p); err != nil {
				t.Fatalf("reading a frame's payload: %v", err)
			}
			if h[3] == 6 && h[4]&1 == 0 { // PING, not an ACK
				pings = append(pings, time.Since(start))
			}
		}
		closed := time.Since(start)
		if len(pings) != 1 || pings[0] != send || closed != send+timeout {
			t.Errorf("PINGs at %v, closed at %v; want one PING at %v (SendPingTimeout after the last frame) and the close at %v (PingTimeout later)",
				pings, closed, send, send+timeout)
		}
	})
}
