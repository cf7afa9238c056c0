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

// The connection timers are the subject of these tests, so each runs its connection in a synctest bubble on
// net.Pipe: the bubble's clock is exact and advances only when every
// goroutine waits, so a timer fires when it is due, never early or late
// on a busy machine.

// bubbleFrame is a frame the client read, with when it came.
type bubbleFrame struct {
	typ, flags byte
	id         uint32
	p          []byte
	at         time.Duration // since the connection started
}

func init() {
	// The writers of this package's test connections run on goroutines
	// of their own (park.go): the bubbles below may not share the pool.
	ownWriters = true
}

// serveInBubble serves a connection with cfg (inside synctest.Test), has
// the client send the preface, an empty SETTINGS and then frames, and
// returns the frames the server sent until it closed the connection and
// the time of the close. It fails the test if the server has not closed
// within 10 s of the bubble's clock.
func serveInBubble(t *testing.T, cfg *Config, frames []byte) ([]bubbleFrame, time.Duration) {
	t.Helper()
	cli, _ := serveBubblePipe(t, cfg)
	start := time.Now()
	go func() { _, _ = cli.Write(rawSeq([]byte(Preface), rawFrame(4, 0, 0), frames)) }()
	_ = cli.SetReadDeadline(start.Add(10 * time.Second)) // a bound on a hang
	var got []bubbleFrame
	for {
		var h [9]byte
		if _, err := io.ReadFull(cli, h[:]); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the connection is still open after %v; frames: %v", time.Since(start), got)
			}
			return got, time.Since(start)
		}
		p := make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))
		if _, err := io.ReadFull(cli, p); err != nil {
			return got, time.Since(start)
		}
		id := uint32(h[5]&0x7f)<<24 | uint32(h[6])<<16 | uint32(h[7])<<8 | uint32(h[8])
		got = append(got, bubbleFrame{h[3], h[4], id, p, time.Since(start)})
	}
}

// serveBubblePipe serves a connection with cfg on a net.Pipe (inside
// synctest.Test) and returns the client's end and a channel closed when
// Serve has returned. The client's end is closed when the test ends.
func serveBubblePipe(t *testing.T, cfg *Config) (net.Conn, <-chan struct{}) {
	t.Helper()
	srv, cli := net.Pipe()
	hc := NewConn(cfg, srv, nil, nil, nil)
	served := make(chan struct{})
	go func() {
		defer close(served)
		hc.Serve(false, nil)
	}()
	t.Cleanup(func() { cli.Close(); <-served })
	return cli, served
}

// TestIdleTimeoutSendsGoAwayAndCloses: a connection with no stream for
// IdleTimeout is sent GOAWAY and closed, when IdleTimeout has passed.
func TestIdleTimeoutSendsGoAwayAndCloses(t *testing.T) {
	const idle = 100 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		frames, closed := serveInBubble(t, &Config{Handler: nopHandler{}, IdleTimeout: idle}, nil)
		var goAway *bubbleFrame
		for i := range frames {
			if frames[i].typ == 7 {
				goAway = &frames[i]
				break
			}
		}
		if goAway == nil || goAway.at != idle || closed != idle {
			t.Errorf("GOAWAY %+v, closed at %v; want GOAWAY and the close at %v (IdleTimeout)", goAway, closed, idle)
		}
	})
}

// TestKeepalivePingUnansweredClosesConnection: after SendPingTimeout
// without a frame from the client the server sends a PING, and a client
// that does not acknowledge it within PingTimeout has its connection
// closed: the PING comes SendPingTimeout after the client's last frame and
// the close PingTimeout after the PING.
func TestKeepalivePingUnansweredClosesConnection(t *testing.T) {
	const send, timeout = 50 * time.Millisecond, 100 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		frames, closed := serveInBubble(t, &Config{Handler: nopHandler{}, SendPingTimeout: send, PingTimeout: timeout}, nil)
		var pings []time.Duration // when each PING from the server came
		for _, f := range frames {
			if f.typ == 6 && f.flags&1 == 0 { // PING, not an ACK
				pings = append(pings, f.at)
			}
		}
		if len(pings) != 1 || pings[0] != send || closed != send+timeout {
			t.Errorf("PINGs at %v, closed at %v; want one PING at %v (SendPingTimeout after the last frame) and the close at %v (PingTimeout later)",
				pings, closed, send, send+timeout)
		}
	})
}
