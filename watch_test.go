package riptide

import (
	"context"
	"errors"
	"io"
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
	t.Parallel()
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

// Done is closed when the client goes away while the handler runs, and
// stays closed for a retained channel after the handler returns.
func TestDoneOnClientDisconnect(t *testing.T) {
	t.Parallel()
	seen := make(chan error, 1)
	entered := make(chan struct{})
	_, addr := startServer(t, nil, func(c *Ctx) {
		io.ReadAll(c.Body())
		close(entered)
		select {
		case <-c.Done():
			seen <- c.Err()
		case <-time.After(20 * time.Second):
			seen <- errors.New("no disconnect seen")
		}
	})
	rc := dial(t, addr)
	rc.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
	<-entered
	rc.nc.Close()
	if err := <-seen; err == nil || err.Error() != "context canceled" {
		t.Fatalf("handler saw %v", err)
	}
}

// A handler that never calls Done pays nothing, and one that does but
// returns normally leaves the connection usable (the watch is stopped and
// any pipelined bytes it read are kept).
func TestDoneWatchStopsCleanly(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) {
		d := c.Done()
		select {
		case <-d:
			t.Error("Done closed while the client is there")
		default:
		}
		hello(c)
	})
	rc := dial(t, addr)
	for i := 0; i < 3; i++ {
		rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "Hello, World!" {
			t.Fatalf("%d %q", res.StatusCode, body)
		}
	}
}
