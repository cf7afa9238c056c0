package riptide

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/riptide-http/riptide/internal/israce"
)

// addrEngines are the engines the address tests run on.
var addrEngines = []struct {
	name   string
	engine Engine
}{
	{"eventloop", EngineEventLoop},
	{"onloop", EngineOnLoop},
	{"goroutine", EngineGoroutine},
}

// serveAddrConns serves h on a listener bound to the unspecified address
// with engine and returns its 127.0.0.1 address to dial.
func serveAddrConns(t *testing.T, engine Engine, h Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	srv := &Server{Handler: h, Engine: engine, Logger: slog.New(slog.DiscardHandler)}
	serveTest(t, srv, testServeOptions{Listener: ln})
	return net.JoinHostPort("127.0.0.1", port)
}

// TestNativeRemoteAddrAllocs checks that a native handler calling
// Ctx.RemoteAddr allocates nothing per request, with requests on several
// keep-alive connections in turn (as a loaded event loop's workers serve
// them), on every engine: the address is made once per connection. Before,
// the event loop made a net.TCPAddr (and its IP) on every call.
func TestNativeRemoteAddrAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if israce.Enabled {
		t.Skip("allocation counts need a build without -race")
	}
	for _, e := range addrEngines {
		t.Run(e.name, func(t *testing.T) {
			addr := serveAddrConns(t, e.engine, HandlerFunc(func(c *Ctx) {
				if a, ok := c.RemoteAddr().(*net.TCPAddr); !ok || a.Port == 0 {
					c.SetStatus(500)
				}
				c.WriteString("Hello, World!")
			}))
			const conns = 4
			n, exact := allocsInTurn(t, addr, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", conns)
			t.Logf("Ctx.RemoteAddr on %d connections in turn: %v allocs/request (%.4f exactly)", conns, n, exact)
			// 0.01: room for allocations made elsewhere in the process
			// (20 in 2000 requests).
			if n != 0 || exact > 0.01 {
				t.Errorf("a handler calling Ctx.RemoteAddr: %v allocs per request (%.4f exactly), want 0", n, exact)
			}
		})
	}
}

// TestNativeRemoteAddrConns checks that each request of connections served
// in turn sees its own connection's address from Ctx.RemoteAddr (and
// LocalAddr), on every engine, now that it is kept per connection.
func TestNativeRemoteAddrConns(t *testing.T) {
	t.Parallel()
	for _, e := range addrEngines {
		t.Run(e.name, func(t *testing.T) {
			addr := serveAddrConns(t, e.engine, HandlerFunc(func(c *Ctx) {
				c.WriteString(c.RemoteAddr().String() + " " + c.RemoteAddr().String() + " " + c.LocalAddr().String())
			}))
			getInTurn(t, addr, 4, 10, func(nc net.Conn) string {
				l, r := nc.LocalAddr().String(), nc.RemoteAddr().String()
				return l + " " + l + " " + r
			})
		})
	}
}

// getInTurn sends GET / on conns keep-alive connections to addr in turn,
// rounds times, and checks each response body against want(its connection).
func getInTurn(t *testing.T, addr string, conns, rounds int, want func(net.Conn) string) {
	t.Helper()
	cs := make([]net.Conn, conns)
	brs := make([]*bufio.Reader, conns)
	for i := range cs {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		cs[i], brs[i] = nc, bufio.NewReader(nc)
	}
	for round := range rounds {
		for i, nc := range cs {
			if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			if _, b := readResponse(t, brs[i]); b != want(nc) {
				t.Fatalf("round %d, connection %d: %q, want %q", round, i, b, want(nc))
			}
		}
	}
}

// allocsInTurn sends req on conns keep-alive connections to addr in turn
// (with allocClient, which allocates nothing) and returns the allocations
// per request, as testing.AllocsPerRun counts them (per round of conns
// requests, rounded down, divided by conns) and exactly (mallocsPerRun).
func allocsInTurn(t *testing.T, addr, req string, conns int) (n, exact float64) {
	cs := make([]*allocClient, conns)
	for i := range cs {
		cs[i] = newAllocClient(t, addr, req)
	}
	each := func() {
		for _, c := range cs {
			c.roundTrip()
		}
	}
	return testing.AllocsPerRun(500, each) / float64(conns), mallocsPerRun(500, each) / float64(conns)
}
