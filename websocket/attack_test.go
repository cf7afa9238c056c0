package websocket

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/ws"
)

// heapNow is the live heap after a collection.
func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

func dial(t *testing.T, url string, o *Options) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := Dial(ctx, url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.NetConn().Close() })
	return c
}

// The client sides of the attacks, shared by this file's tests (a
// blocking Conn) and event_attack_linux_test.go's (the event-driven mode).

// writeFragmentsPastLimit writes one binary message of 16 MB on c in
// 1000-byte writes (4 KiB frames), until a write fails.
func writeFragmentsPastLimit(c *Conn) {
	w, err := c.NextWriter(BinaryMessage)
	if err != nil {
		return
	}
	frag := make([]byte, 1000)
	for range 1 << 14 {
		if _, err := w.Write(frag); err != nil {
			return
		}
	}
	w.Close()
}

// expectClose1009 fails t unless c's next read ends with close 1009.
func expectClose1009(t *testing.T, c *Conn) {
	t.Helper()
	if _, _, err := c.ReadMessage(); CloseStatus(err) != ws.CloseTooBig {
		t.Errorf("client read: %v, want close 1009", err)
	}
}

// dialBomb allocates a compression bomb (64 MiB of zeros, about 64 KiB
// compressed), dials url with permessage-deflate and sends the bomb from
// a goroutine.
func dialBomb(t *testing.T, url string) *Conn {
	t.Helper()
	bomb := make([]byte, 64<<20)
	c := dial(t, url, &Options{Compression: true})
	if !c.Compressed() {
		t.Fatal("permessage-deflate not negotiated")
	}
	go c.WriteMessage(BinaryMessage, bomb)
	return c
}

// floodPings sends 125-byte pings on c, each written within wait, and
// reads no pong, until a write fails (4M pings at most). It fails t if
// none failed, or if the process runs more than 4 goroutines over g0
// then; it returns the pings sent and the write error.
func floodPings(t *testing.T, c *Conn, wait time.Duration, g0 int) (int, error) {
	t.Helper()
	ping := make([]byte, 125)
	var sent int
	var werr error
	for sent < 1<<22 {
		if werr = c.WriteControl(PingMessage, ping, time.Now().Add(wait)); werr != nil {
			break
		}
		sent++
	}
	if werr == nil {
		t.Fatalf("client sent %d pings without reading a pong and without being stopped", sent)
	}
	if g := runtime.NumGoroutine(); g > g0+4 {
		t.Errorf("%d goroutines during the flood, %d before", g, g0)
	}
	return sent, werr
}

// dropConns opens n connections to url and drops them without a close
// frame, then waits, 20 s at most, until live (the connections the server
// still serves) is 0.
func dropConns(t *testing.T, url string, n int, live *atomic.Int64) {
	t.Helper()
	for _, nc := range idleConns(t, url, n) {
		nc.Close() // no close frame
	}
	for i := 0; live.Load() > 0; i++ {
		if i == 20000 {
			t.Fatalf("%d connections still served 20 s after their clients dropped", live.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// slowDrip opens a connection to url for each of drip true and false:
// with drip it writes a 1000-byte frame to it a byte every 20 ms, without
// it sends nothing. Each time, once ended has checked how the server
// ended the connection, the server must have closed the socket.
func slowDrip(t *testing.T, url string, ended func(drip bool)) {
	t.Helper()
	for _, drip := range []bool{true, false} {
		nc := idleConns(t, url, 1)[0]
		stop := make(chan struct{})
		if drip {
			go func() {
				frame := append(ws.AppendHeader(nil, ws.Header{Fin: true, Op: ws.OpBinary, Masked: true, Length: 1000}), make([]byte, 1000)...)
				for _, b := range frame {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					if _, err := nc.Write([]byte{b}); err != nil {
						return
					}
				}
			}()
		}
		ended(drip)
		close(stop)
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.Copy(io.Discard, nc); err != nil {
			t.Errorf("drip %v: the server did not close the connection: %v", drip, err)
		}
		nc.Close()
	}
}

// A client that never reads, under a server that sends as fast as it can:
// the server's writes block once the socket buffers fill (write
// backpressure), the write deadline ends them, and the server's heap does
// not grow with what it tried to send.
func TestNeverReadingClient(t *testing.T) {
	const ceiling = 1 << 30 // a server that never blocked would pass this
	type result struct {
		sent int64
		err  error
		heap int64
	}
	res := make(chan result, 1)
	url := serve(t, riptide.EngineAuto, riptide.HandlerFunc(func(x *riptide.Ctx) {
		c, err := Upgrade(x, nil)
		if err != nil {
			res <- result{err: err}
			return
		}
		defer c.NetConn().Close()
		msg := make([]byte, 16<<10)
		before := heapNow()
		var r result
		for r.sent < ceiling {
			c.SetWriteDeadline(time.Now().Add(300 * time.Millisecond))
			if r.err = c.WriteMessage(BinaryMessage, msg); r.err != nil {
				break
			}
			r.sent += int64(len(msg))
		}
		r.heap = int64(heapNow()) - int64(before)
		res <- r
	}))
	dial(t, url, nil) // and never read
	r := <-res
	var ne net.Error
	if !errors.As(r.err, &ne) || !ne.Timeout() {
		t.Fatalf("server sent %d bytes to a client that reads nothing; write error %v, want a timeout", r.sent, r.err)
	}
	if r.heap > 1<<20 {
		t.Errorf("server heap grew %d bytes while blocked (sent %d bytes), want under 1 MiB", r.heap, r.sent)
	}
	t.Logf("sent %d bytes before the write blocked; heap growth %d", r.sent, r.heap)
}

// A fragmented message that goes past the read limit fails the connection
// with 1009 once the limit is passed; the fragments after it are not read.
func TestFragmentedBeyondLimit(t *testing.T) {
	errc := make(chan error, 1)
	url := serve(t, riptide.EngineAuto, riptide.HandlerFunc(func(x *riptide.Ctx) {
		c, err := Upgrade(x, &Options{ReadLimit: 64 << 10})
		if err != nil {
			errc <- err
			return
		}
		_, msg, err := c.ReadMessage()
		if err == nil {
			err = errors.New("message of " + itoa(len(msg)%1000) + " accepted")
		}
		errc <- err
		c.Close()
	}))
	c := dial(t, url, nil)
	go writeFragmentsPastLimit(c)
	if err := <-errc; err != ws.ErrMessageTooBig {
		t.Errorf("server read: %v, want %v", err, ws.ErrMessageTooBig)
	}
	expectClose1009(t, c)
}

// A compression bomb (64 MiB of zeros, about 64 KiB compressed) against a
// 1 MiB read limit: the server stops inflating just past the limit, fails
// the connection with 1009 and allocates a bounded amount doing so.
func TestCompressionBomb(t *testing.T) {
	type result struct {
		err   error
		alloc uint64
	}
	res := make(chan result, 1)
	url := serve(t, riptide.EngineAuto, riptide.HandlerFunc(func(x *riptide.Ctx) {
		c, err := Upgrade(x, &Options{Compression: true, ReadLimit: 1 << 20})
		if err != nil {
			res <- result{err: err}
			return
		}
		before := totalAlloc()
		_, _, err = c.ReadMessage()
		res <- result{err, totalAlloc() - before}
		c.Close()
	}))
	c := dialBomb(t, url)
	r := <-res
	if r.err != ws.ErrMessageTooBig {
		t.Errorf("server read: %v, want %v", r.err, ws.ErrMessageTooBig)
	}
	// The 1 MiB message buffer doubles up to 2 MiB (4 MiB allocated in
	// all); an unbounded inflate would allocate 64 MiB.
	if r.alloc > 8<<20 {
		t.Errorf("server allocated %d bytes reading the bomb, want under 8 MiB", r.alloc)
	}
	expectClose1009(t, c)
}

// A ping flood from a client that never reads the pongs: the server answers
// each ping synchronously, so once the pongs fill the socket it stops
// reading and the client's writes block; a pong that cannot be written
// within the close timeout drops the connection. Either way the flood ends
// and nothing queues in the server.
func TestPingFlood(t *testing.T) {
	type result struct {
		err  error
		heap int64
	}
	res := make(chan result, 1)
	started := make(chan uint64, 1)
	url := serve(t, riptide.EngineAuto, riptide.HandlerFunc(func(x *riptide.Ctx) {
		c, err := Upgrade(x, &Options{CloseTimeout: 300 * time.Millisecond})
		if err != nil {
			res <- result{err: err}
			return
		}
		defer c.NetConn().Close()
		before := <-started
		_, _, err = c.ReadMessage()
		res <- result{err, int64(heapNow()) - int64(before)}
	}))
	c := dial(t, url, nil)
	g0 := runtime.NumGoroutine() // the engine's goroutines have started
	started <- heapNow()
	sent, _ := floodPings(t, c, 300*time.Millisecond, g0)
	c.NetConn().Close()
	r := <-res
	if r.err == nil {
		t.Error("server read a message from a ping flood")
	}
	if r.heap > 1<<20 {
		t.Errorf("server heap grew %d bytes over %d pings, want under 1 MiB", r.heap, sent)
	}
	t.Logf("%d pings before the client's write blocked", sent)
}

// Connections opened and dropped without a close frame give everything
// back: each server Conn's read ends, its goroutine exits, and three more
// rounds of as many connections leave the heap within 256 KiB (under 90
// bytes per connection; the event loop's pools move by tens of KiB) of
// where the first left it (the first grows the engine's tables to the
// number of sockets). A Conn left behind would be some 5 KiB each.
func TestDroppedConnsIdleMemory(t *testing.T) {
	var live atomic.Int64
	url := serve(t, riptide.EngineAuto, riptide.HandlerFunc(func(x *riptide.Ctx) {
		if c, err := Upgrade(x, nil); err == nil {
			live.Add(1)
			go func() {
				wholeEcho(c)
				live.Add(-1)
			}()
		}
	}))
	const n = 1000
	dropConns(t, url, n, &live)
	g0, before := runtime.NumGoroutine(), quietMem()
	for range 3 {
		dropConns(t, url, n, &live)
	}
	after := quietMem()
	if g := runtime.NumGoroutine(); g > g0+2 {
		t.Errorf("%d goroutines after %d more dropped connections, %d before", g, 3*n, g0)
	}
	if grew := int64(after) - int64(before); grew > 256<<10 && !israce.Enabled {
		t.Errorf("heap and stacks %d bytes above the first round's after %d more dropped connections, want under 256 KiB", grew, 3*n)
	}
}

// A message dripping in a byte at a time, and a connection that sends
// nothing: with Options.ReadTimeout each read fails with a timeout and the
// connection is closed, so a slow client holds a Conn no longer than that.
func TestSlowDrip(t *testing.T) {
	errc := make(chan error, 1)
	url := serve(t, riptide.EngineAuto, riptide.HandlerFunc(func(x *riptide.Ctx) {
		if c, err := Upgrade(x, &Options{ReadTimeout: 200 * time.Millisecond}); err == nil {
			_, _, err := c.ReadMessage()
			errc <- err
		}
	}))
	slowDrip(t, url, func(drip bool) {
		var ne net.Error
		if err := <-errc; !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("drip %v: server read %v, want a timeout", drip, err)
		}
	})
}
