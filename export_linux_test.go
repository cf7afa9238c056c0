package riptide

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// WorkersSpawned returns how many worker goroutines the event-loop engine
// has started for s's listeners that are still served.
func (s *Server) WorkersSpawned() int64 {
	s.el.mu.Lock()
	defer s.el.mu.Unlock()
	var n int64
	for g := range s.el.groups {
		n += g.Spawned()
	}
	return n
}

// h2Parked maps a client address to the channel H2ParkWatch returned for
// it, closed (and removed) when that connection parks; h2Watching counts
// them, so that the hook costs nothing (the allocation tests count) while
// no test watches.
var (
	h2Parked   sync.Map
	h2Watching atomic.Int64
)

// H2ParkWatch returns a channel closed when the HTTP/2 connection from the
// client address client (its local address) next parks on the event loop.
// The hook it installs stays for the test binary's life.
func H2ParkWatch(client string) <-chan struct{} {
	ch := make(chan struct{})
	h2Watching.Add(1)
	h2Parked.Store(client, ch)
	if h2ParkHook.Load() == nil {
		hook := func(client net.Addr) {
			if h2Watching.Load() == 0 {
				return
			}
			if ch, ok := h2Parked.LoadAndDelete(client.String()); ok {
				h2Watching.Add(-1)
				close(ch.(chan struct{}))
			}
		}
		h2ParkHook.CompareAndSwap(nil, &hook)
	}
	return ch
}

// SetH2ParkDelay sets how long s's h2c connections on the event loop stay
// quiet before they park (zero, the default: at once). Call it before
// Serve.
func (s *Server) SetH2ParkDelay(d time.Duration) { s.h2state.parkDelay = d }

// H2Parks reports whether idle h2c connections of a test server that
// leaves Engine at EngineAuto park on the event loop.
func H2Parks() bool { return autoEngine == EngineEventLoop || autoEngine == EngineOnLoop }

// H2TLSParks reports whether idle HTTP/2 connections over TLS of a test
// server that leaves TLSEngine at EngineAuto park on the event loop
// (the default on Linux; RIPTIDE_TLS_ENGINE=goroutine, engine_test.go, turns it off).
func H2TLSParks() bool { return (&Server{}).tlsOnLoop() }
