package riptide

import (
	"context"
	"sync"
	"testing"
	"time"
)

// A Ctx handed to a library as a context.Context has Done and Err called
// from the library's own goroutines (context.WithCancel's propagation
// goroutine, database/sql's Rows.awaitDone), during the handler and after
// it returned. Both must be safe (the race detector checks) and a Done
// obtained after the handler returned must be closed, not a channel of the
// next request that never closes.
func TestCtxDoneFromOtherGoroutines(t *testing.T) {
	late := make(chan (<-chan struct{}), 1)
	release := make(chan struct{})
	_, addr := startServer(t, nil, func(c *Ctx) {
		ctx, cancel := context.WithTimeout(c, time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 100; j++ {
					_ = c.Done()
					_ = c.Err()
					_ = ctx.Err()
				}
			}()
		}
		go func() {
			<-release // after the handler returned
			late <- c.Done()
		}()
		c.WriteString("ok")
		wg.Wait()
	})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := rc.resp("GET"); body != "ok" {
		t.Fatalf("body %q", body)
	}
	close(release)
	select {
	case <-<-late:
	case <-time.After(10 * time.Second):
		t.Fatal("Done obtained after the handler returned is not closed")
	}
	// The connection still serves requests.
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := rc.resp("GET"); body != "ok" {
		t.Fatalf("second body %q", body)
	}
}
