package riptide

// Engine selects how a Server runs its connections.
//
// The goroutine engine serves each connection on its own goroutine over Go's
// netpoller; it works on every platform and for every net.Listener.
//
// The event-loop engine (Linux only, plain TCP listeners only) runs a few
// epoll loops that own the sockets. A connection waiting for its next
// request holds no goroutine and no buffer, only a small record on its loop
// (see eventloop_linux.go); when a request arrives, a pooled worker
// goroutine serves it with the same HTTP/1.1 code as the goroutine engine,
// so handlers may block. TLS listeners, and any other listener that is not
// a *net.TCPListener, always use the goroutine engine. A hijacked
// connection leaves the loop as an ordinary *net.TCPConn; HTTP/2 over h2c
// stays on its worker goroutine for the connection's life.
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
)

var engineNames = [...]string{"auto", "goroutine", "eventloop"}

// String returns "auto", "goroutine" or "eventloop".
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

// engine resolves s.Engine.
func (s *Server) engine() Engine {
	if s.Engine == EngineAuto {
		return autoEngine
	}
	return s.Engine
}
