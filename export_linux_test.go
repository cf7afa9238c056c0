package riptide

import (
	"net"
	"sync"
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
// it, closed (and removed) when that connection parks.
var h2Parked sync.Map

func init() {
	hook := func(client net.Addr) {
		if ch, ok := h2Parked.LoadAndDelete(client.String()); ok {
			close(ch.(chan struct{}))
		}
	}
	h2ParkHook.Store(&hook)
}

// H2ParkWatch returns a channel closed when the HTTP/2 connection from the
// client address client (its local address) next parks on the event loop.
func H2ParkWatch(client string) <-chan struct{} {
	ch := make(chan struct{})
	h2Parked.Store(client, ch)
	return ch
}

// H2Parks reports whether idle h2c connections of a test server that
// leaves Engine at EngineAuto park on the event loop.
func H2Parks() bool { return autoEngine == EngineEventLoop || autoEngine == EngineOnLoop }
