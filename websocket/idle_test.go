package websocket

import (
	"bufio"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
)

// idleConns opens n WebSocket connections to url with raw sockets (no
// client-side Conn, so the process's memory growth is the server's and the
// client sockets') and returns them once every upgrade was answered.
func idleConns(t *testing.T, url string, n int) []net.Conn {
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/")
	conns := make([]net.Conn, 0, n)
	req := "GET / HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
	for range n {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
		nc.Write([]byte(req))
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil || resp.StatusCode != 101 {
			t.Fatalf("upgrade: %v %v", resp, err)
		}
	}
	return conns
}

// memNow is heap in use plus goroutine stacks after a collection.
func memNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// quietMem is memNow once it stops moving (connections of an earlier
// measurement are still being released).
func quietMem() uint64 {
	m := memNow()
	for range 100 {
		time.Sleep(10 * time.Millisecond)
		m2 := memNow()
		if d := int64(m2) - int64(m); d > -32<<10 && d < 32<<10 {
			return m2
		}
		m = m2
	}
	return m
}

// An idle blocking Conn (parked in ReadMessage) costs its read and write
// buffers, the Conn and its goroutine; served inside the handler it also
// keeps what the engine holds for a running handler (its connection
// buffers; on the event loop a worker). Measured per connection over 500
// connections, with the clients' sockets: under 64 KiB inside the handler,
// under 10 KiB on its own goroutine after the handler returned
// (docs/websocket.md has the numbers; the event-driven mode, Serve, brings
// it under 1 KiB: TestEventIdleMemory).
func TestIdleMemory(t *testing.T) {
	if israce.Enabled {
		t.Skip("memory is not meaningful under -race")
	}
	for _, e := range []riptide.Engine{riptide.EngineAuto, riptide.EngineGoroutine} {
		for _, detach := range []bool{false, true} {
			name := e.String() + "/in-handler"
			if detach {
				name = e.String() + "/own-goroutine"
			}
			limit := int64(64 << 10)
			if detach {
				limit = 10 << 10
			}
			t.Run(name, func(t *testing.T) { idleMemory(t, e, detach, 500, limit) })
		}
	}
}

func idleMemory(t *testing.T, e riptide.Engine, detach bool, n int, limit int64) {
	var live atomic.Int64
	run := func(c *Conn) {
		wholeEcho(c)
		live.Add(-1)
	}
	url := serve(t, e, riptide.HandlerFunc(func(x *riptide.Ctx) {
		if c, err := Upgrade(x, nil); err == nil {
			live.Add(1)
			if detach {
				go run(c)
			} else {
				run(c)
			}
		}
	}))
	idleConns(t, url, 20) // warm up the server
	before := quietMem()
	conns := idleConns(t, url, n)
	per := (int64(memNow()) - int64(before)) / int64(n)
	t.Logf("%d bytes per idle connection (heap and stacks, both ends' sockets)", per)
	if per > limit {
		t.Errorf("%d bytes per idle connection, want at most %d", per, limit)
	}
	for _, c := range conns {
		c.Close()
	}
	// Let the next measurement start from a quiet heap.
	for live.Load() > 20 {
		time.Sleep(time.Millisecond)
	}
}
