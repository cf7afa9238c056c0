package riptide

import (
	"context"
	"sync"
	"testing"
)

// TestLazyCtxDoneRacesCancel: a request's Context asked for Done on one
// goroutine while the request ends on another (lazyCtx, which takes no
// lock) is cancelled whichever comes first: every channel Done returned
// is closed once cancel has returned, Err is then context.Canceled, and a
// context derived after the end is cancelled too. Under -race this also
// checks that the two sides only meet through inner.
func TestLazyCtxDoneRacesCancel(t *testing.T) {
	for i := range 2000 {
		var c lazyCtx
		var wg sync.WaitGroup
		chans := make([]<-chan struct{}, 2)
		created := make([]bool, 2)
		start := make(chan struct{})
		wg.Add(3)
		// Each side in turn is started last (the scheduler runs the
		// newest goroutine first) and all wait for start, so that every
		// order of the three calls comes up.
		for k := range 3 {
			switch g := (i + k) % 3; g {
			case 2:
				go func() {
					defer wg.Done()
					<-start
					c.cancel()
				}()
			default:
				go func() {
					defer wg.Done()
					<-start
					chans[g], created[g] = c.done()
				}()
			}
		}
		close(start)
		wg.Wait()
		if created[0] && created[1] {
			t.Fatalf("round %d: both Done calls made an inner context", i)
		}
		for g, ch := range chans {
			select {
			case <-ch:
			default:
				t.Fatalf("round %d: Done channel %d not closed after cancel", i, g)
			}
		}
		if err := c.Err(); err != context.Canceled {
			t.Fatalf("round %d: Err = %v, want context.Canceled", i, err)
		}
		d, stop := context.WithCancel(lazyCtxDone{&c})
		select {
		case <-d.Done():
		default:
			t.Fatalf("round %d: a context derived after the end is not cancelled", i)
		}
		stop()
	}
}

// lazyCtxDone is a lazyCtx as a context.Context (compatContext's Done
// without the disconnect watch).
type lazyCtxDone struct{ *lazyCtx }

func (c lazyCtxDone) Done() <-chan struct{} {
	ch, _ := c.done()
	return ch
}
