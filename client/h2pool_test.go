package client

import (
	"runtime"
	"testing"
)

// TestH2PickNoDialRace: a request that finds the origin's only HTTP/2
// connection still waiting for the server's first SETTINGS (carrying the
// request that dialed it) waits for them and then takes a stream there; it
// never asks for a second connection, however the SETTINGS arrival falls
// against its pick. The pick used to reserve, fail, and then look for the
// pending SETTINGS in a second step: SETTINGS arriving in between made it
// dial (TestH2Interop saw 2 connections for 100 concurrent requests in
// about 1 run in 40 under -race).
func TestH2PickNoDialRace(t *testing.T) {
	p := &hostPool{c: &Client{}}
	for i := range 20000 {
		hc := &h2Conn{p: p, maxActive: 100, nextID: 3, active: 1, settings: make(chan struct{})}
		p.h2s = []*h2Conn{hc}
		done := make(chan struct{})
		go func() {
			for range i % 128 {
				runtime.Gosched()
			}
			hc.mu.Lock()
			hc.gotSettings = true
			close(hc.settings)
			hc.mu.Unlock()
			close(done)
		}()
		spins := 0
		for {
			got, wait := p.pickH2()
			if got == hc {
				break
			}
			if got != nil || wait == nil {
				t.Fatalf("iteration %d: pick returned %p, wait %v: a dial asked for while the connection had room (active %d of %d)", i, got, wait, hc.active, hc.maxActive)
			}
			// Pick again at once (rather than wait) so that the SETTINGS
			// arrival lands anywhere in the pick.
			if spins++; spins%64 == 0 {
				runtime.Gosched()
			}
		}
		<-done
		if hc.active != 2 {
			t.Fatalf("iteration %d: %d streams reserved, want 2", i, hc.active)
		}
	}
}
