package evloop

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// flood is a protocol that writes without waiting (WriteNow) and parks
// with output left (ParkFor with wantWrite), as an event-driven WebSocket
// does: it sends total bytes in all, never reading.
type flood struct {
	echo
	left, serves, alarms atomic.Int64
	chunk                []byte
}

func (f *flood) Serve(w *Worker, c *Conn, fresh bool) {
	f.serves.Add(1)
	if c.ReadExpired() {
		f.alarms.Add(1)
		c.SetWakeAt(0)
	}
	for f.left.Load() > 0 {
		n, err := c.WriteNow([][]byte{f.chunk[:min(int64(len(f.chunk)), f.left.Load())]})
		if err != nil {
			c.Untrack()
			return
		}
		if n == 0 {
			// The socket is full: park until it drains.
			if c.ParkFor(Saved{Proto: f}, nil, true) {
				return
			}
			continue
		}
		f.left.Add(int64(-n))
	}
	// All sent: park for input, with an alarm in 50 ms (Saved.Proto:
	// the scanner hands the connection to a worker rather than closing
	// it).
	if f.alarms.Load() == 0 {
		c.SetWakeAt(time.Now().Add(50 * time.Millisecond).UnixNano())
	}
	for !c.ParkFor(Saved{Proto: f}, nil, false) {
		var b [64]byte
		if _, err := c.TryRead(b[:]); err != nil {
			c.Untrack()
			return
		}
	}
}

// A connection parked with output left (ParkFor, wantWrite) is handed to
// a worker when the socket drains, with no input from the peer: every byte
// arrives though the peer sends none. Parked with a protocol state and a
// read deadline (SetWakeAt), the scanner hands it to a worker when the
// deadline passes instead of closing it.
func TestParkForWritable(t *testing.T) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const total = 32 << 20 // far more than the socket buffers
	f := &flood{chunk: make([]byte, 256<<10)}
	f.ended = make(chan *Group, 1)
	f.left.Store(total)
	var clock atomic.Int64
	g, err := New(ln, Config{Handler: f, Clock: &clock, Backoff: func(time.Duration) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := io.CopyN(io.Discard, nc, total); err != nil {
		t.Fatalf("read %d bytes of %d: %v", n, total, err)
	}
	if s := f.serves.Load(); s < 2 {
		t.Errorf("served %d times: the writable edge did not bring the parked connection back", s)
	}
	waitUntil(t, "the alarm", func() bool { return f.alarms.Load() == 1 })
	if f.gone.Load() != 0 {
		t.Error("the connection was closed at its alarm")
	}
}
