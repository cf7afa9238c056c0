package riptide

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

type reqCtxKey struct{}

// waitDone waits (boundedly: a hang is the failure) for ctx to be
// cancelled.
func waitDone(t *testing.T, what string, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: not cancelled", what)
	}
}

// TestRequestContext: the context Ctx.Context returns may be kept by a
// goroutine: it is cancelled when the request ends, and keeps its own
// request's locals while the Ctx serves the next request on the
// connection (HTTP/1.1 keep-alive, and HTTP/2 streams); contexts derived
// from it are cancelled with it; CancelAfter's deadline ends it with
// DeadlineExceeded, whether set before or after Context.
func TestRequestContext(t *testing.T) {
	kept := make(chan context.Context, 1)
	release := make(chan struct{})
	h := func(c *Ctx) {
		switch string(c.Path()) {
		case "/keep":
			c.SetLocal(reqCtxKey{}, c.QueryArgString("v"))
			ctx := c.Context()
			if c.Context() != ctx || ctx.Err() != nil {
				c.WriteString("a second call gave another context, or it is already cancelled")
				return
			}
			kept <- ctx
			if c.QueryArgString("hold") != "" {
				<-release // the test reads the first context meanwhile
			}
			c.WriteString("ok")
		case "/derived":
			d, cancel := context.WithCancel(c.Context())
			_ = cancel // cancelled with its parent
			kept <- d
			c.WriteString("ok")
		case "/deadline-before", "/deadline-after":
			if c.Path()[len("/deadline-")] == 'b' {
				c.CancelAfter(time.Millisecond)
			}
			ctx := c.Context()
			c.CancelAfter(time.Millisecond) // no effect when already set
			<-ctx.Done()
			dl, ok := ctx.Deadline()
			fmt.Fprintf(c, "err=%v deadline=%v in the past=%v", ctx.Err(), ok, dl.Before(time.Now()))
		}
	}
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		t.Run(proto, func(t *testing.T) {
			srv := &Server{}
			client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: 20 * time.Second}
			if proto == "HTTP/2.0" {
				srv.HTTP2 = &HTTP2Config{H2C: true}
				client = h2cTestClient(t)
			}
			_, addr := startServer(t, srv, h)
			get := func(path string) { // from other goroutines: t.Error only
				res, err := client.Get("http://" + addr + path)
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.Proto != proto || string(b) != "ok" {
					t.Errorf("GET %s: %s %q, want %s ok", path, res.Proto, b, proto)
				}
			}

			go get("/keep?v=one")
			one := <-kept
			waitDone(t, "the first request's context after it ended", one)
			if one.Err() != context.Canceled || one.Value(reqCtxKey{}) != "one" {
				t.Errorf("after the request: Err %v, value %v; want Canceled, one", one.Err(), one.Value(reqCtxKey{}))
			}
			// The next request on the connection (the Ctx reused) sets its
			// own value; the first context still carries the first's, read
			// from this goroutine while the handler runs.
			done := make(chan struct{})
			go func() { get("/keep?v=two&hold=1"); close(done) }()
			two := <-kept
			if got := one.Value(reqCtxKey{}); got != "one" {
				t.Errorf("first context during the next request: value %v, want one", got)
			}
			if two.Err() != nil || two.Value(reqCtxKey{}) != "two" || two.Value("other") != nil {
				t.Errorf("second context while its request runs: Err %v, value %v; want nil, two", two.Err(), two.Value(reqCtxKey{}))
			}
			close(release)
			<-done
			waitDone(t, "the second request's context", two)
			release = make(chan struct{})

			go get("/derived")
			d := <-kept
			waitDone(t, "a context derived from Context", d)

			for _, path := range []string{"/deadline-before", "/deadline-after"} {
				res, err := client.Get("http://" + addr + path)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if want := "err=context deadline exceeded deadline=true in the past=true"; string(b) != want {
					t.Errorf("%s: %q, want %q", path, b, want)
				}
			}
		})
	}
}

// TestRequestContextClientGone: the context is cancelled when the client
// goes away, while the handler still runs.
func TestRequestContextClientGone(t *testing.T) {
	started := make(chan struct{})
	errc := make(chan error, 1)
	_, addr := startServer(t, nil, func(c *Ctx) {
		ctx := c.Context()
		close(started)
		select {
		case <-ctx.Done():
			errc <- ctx.Err()
		case <-time.After(20 * time.Second):
			errc <- fmt.Errorf("not cancelled when the client left")
		}
	})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	rc.nc.Close()
	if err := <-errc; err != context.Canceled {
		t.Errorf("Err: %v, want context.Canceled", err)
	}
}
