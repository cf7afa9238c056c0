package riptide

// Engine selects how a Server runs its connections.
//
// The goroutine engine serves each connection on its own goroutine over Go's
// netpoller; it works on every platform and for every net.Listener.
//
// The event-loop engine (Linux only, plain TCP listeners only) runs a few
// epoll loops that own the sockets. A connection waiting for its next
// request holds no goroutine and no buffer, only a small record on its loop
// (see internal/evloop); when a request arrives, a pooled worker
// goroutine serves it with the same HTTP/1.1 code as the goroutine engine,
// so handlers may block. A hijacked connection leaves the loop as an
// ordinary *net.TCPConn; HTTP/2 over h2c stays on its worker goroutine for
// the connection's life. When idle connections end in a burst (thousands of
// clients closing at once, or reaching IdleTimeout together), the loops close
// them without a worker goroutine each.
//
// TLS: ServeTLS and ListenAndServeTLS use the goroutine engine unless
// Server.TLSEngine asks for the event loop (opt-in, Linux, a plain TCP
// listener without the PROXY protocol): there an idle TLS keep-alive
// connection parks as a plaintext one does, keeping only crypto/tls's own
// state (about 7 KB of heap, TestTLSIdleCost), and the handshake and
// HTTP/2 run on pooled workers. Any other listener that is not a
// *net.TCPListener always uses the goroutine engine.
// On the goroutine engine an idle TLS keep-alive connection keeps its
// goroutine (an 8 KiB stack), the engine's per-connection state (about
// 6 KiB) and crypto/tls's own state (about 7 KB); its write and read
// buffers (about 37 KiB by default) go back to a pool while it waits
// (13.3 KB of heap in all, TestTLSIdleCost). The bench workload idletls
// measured it, before the read buffer was lent: about 46 KiB of server RSS
// per idle connection for the native API and 53 KiB for the compat door,
// against 38 KiB for net/http and 42 KiB for fasthttp (2,000 connections,
// loaded machine; 67 and 69 KiB before the write buffers were lent). Plain-TCP
// idle connections on the event loop cost under 1 KiB.
type Engine int

const (
	// EngineAuto picks the engine for the platform and listener: the
	// event loop for plain TCP listeners on Linux, the goroutine engine
	// for everything else.
	EngineAuto Engine = iota
	// EngineGoroutine serves every connection on its own goroutine.
	EngineGoroutine
	// EngineEventLoop serves plain TCP listeners on Linux with epoll
	// loops; elsewhere it falls back to the goroutine engine.
	EngineEventLoop
	// EngineOnLoop is EngineEventLoop with native handlers run on the
	// loop goroutine itself instead of on a pooled worker: no hand-off
	// per request. It is opt-in because of its contract:
	//
	//	THE HANDLER MUST NOT BLOCK. While it runs, no other connection
	//	of its loop (one of GOMAXPROCS) is served. No sleeping, no
	//	locks held by slow code, no database or upstream calls, no
	//	waiting on channels. Compute the response from the request and
	//	return.
	//
	// What the engine does when a handler blocks anyway, so that nothing
	// deadlocks: when the engine itself would wait (reading a request
	// body that has not fully arrived, a response larger than the
	// socket's buffer, Flush to a slow client, Hijack, an h2c upgrade,
	// the lingering close), the goroutine first hands the loop to a
	// pooled worker and then waits as an ordinary worker; the next event
	// of the loop is served by the new loop goroutine. When a handler
	// blocks on something the engine cannot see (time.Sleep, a channel,
	// a mutex, a slow syscall), the group's scanner notices within two
	// scan intervals (about 50 ms) that the loop has not moved and hands
	// the loop to a new goroutine in the same way: other connections
	// stall for that long, nothing is lost. Correct either way, but a
	// blocking handler turns every request into a stall, so use
	// EngineEventLoop (the default) for such handlers.
	//
	// Only the native door runs on the loop: a Server whose Handler is
	// FromHTTP(...) (the compat door) runs as EngineEventLoop. New
	// connections (PROXY header, h2c detection) and HTTP/2 are served on
	// workers as in EngineEventLoop. TLS and non-TCP listeners use the
	// goroutine engine; off Linux, so does this.
	EngineOnLoop
)

var engineNames = [...]string{"auto", "goroutine", "eventloop", "onloop"}

// String returns "auto", "goroutine", "eventloop" or "onloop".
func (e Engine) String() string {
	if e >= 0 && int(e) < len(engineNames) {
		return engineNames[e]
	}
	return "unknown"
}

// autoEngine is what EngineAuto means: platformEngine (the event loop on
// Linux). Tests switch it to run the whole suite on either engine (see
// engine_test.go).
var autoEngine = platformEngine

// autoTLSEngine is what TLSEngine's EngineAuto means: EngineAuto here
// follows Engine (the event loop on Linux, unless Engine asks for the
// goroutine engine). TLS on the event loop became the default once its
// throughput held against the goroutine engine (1.31x for HTTP/1.1, 1.20x
// for HTTP/2 over TLS, bench/results/2026-12-07-tlsloop-quiet). Tests
// switch it (engine_test.go).
var autoTLSEngine = EngineAuto

// engine resolves s.Engine.
func (s *Server) engine() Engine {
	if s.Engine == EngineAuto {
		return autoEngine
	}
	return s.Engine
}
