package riptide_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"golang.org/x/net/http2"
)

// startRiptideH2 serves h on a riptide.Server set up by configure, in h2c
// mode, and returns the instance and the server.
func startRiptideH2(t *testing.T, h riptide.Handler, configure func(*riptide.Server)) (*h2Instance, *riptide.Server) {
	t.Helper()
	srv := &riptide.Server{Handler: h, HTTP2: &riptide.HTTP2Config{H2C: true}, Logger: slog.New(slog.DiscardHandler)}
	if configure != nil {
		configure(srv)
	}
	ts := riptide.ServeTest(t, srv, riptide.TestServeOptions{})
	parks := srv.Engine == riptide.EngineAuto && srv.TLSConfig == nil && riptide.H2Parks()
	return &h2Instance{addr: ts.Addr, app: newH2App(t), parks: parks}, srv
}

// TestH2SettingsFromConfig checks that the limits in riptide's config reach
// the client in the server's SETTINGS frame.
func TestH2SettingsFromConfig(t *testing.T) {
	t.Parallel()
	in, _ := startRiptideH2(t, riptide.HandlerFunc(func(*riptide.Ctx) {}), func(s *riptide.Server) {
		s.MaxHeaderBytes = 8192
		s.HTTP2.MaxConcurrentStreams = 7
	})
	a := newH2Attacker(t, in, 0)
	f, err := a.Fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		t.Fatalf("first server frame: %v, want SETTINGS", f)
	}
	if v, _ := sf.Value(http2.SettingMaxConcurrentStreams); v != 7 {
		t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS = %d, want 7 (HTTP2Config.MaxConcurrentStreams)", v)
	}
	if v, _ := sf.Value(http2.SettingMaxFrameSize); v != 16384 {
		t.Errorf("SETTINGS_MAX_FRAME_SIZE = %d, want 16384 (the default)", v)
	}
	// The server adds a little per-field overhead (HPACK's 32 bytes per
	// field) to the HTTP/1 byte limit.
	if v, ok := sf.Value(http2.SettingMaxHeaderListSize); !ok || v < 8192 || v > 8192+1024 {
		t.Errorf("SETTINGS_MAX_HEADER_LIST_SIZE = %d (sent: %v), want about 8192 (Server.MaxHeaderBytes)", v, ok)
	}
}

// TestH2ShutdownGraceful checks Shutdown with an HTTP/2 request in flight:
// the request completes, Shutdown waits for it and returns nil, and the
// connection reports new, active and closed to ConnState.
func TestH2ShutdownGraceful(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var states []riptide.ConnState
	h := riptide.HandlerFunc(func(c *riptide.Ctx) {
		close(entered)
		<-release
		c.WriteString("finished")
	})
	in, srv := startRiptideH2(t, h, func(s *riptide.Server) {
		s.ConnState = func(_ net.Conn, st riptide.ConnState) {
			mu.Lock()
			states = append(states, st)
			mu.Unlock()
		}
	})
	// Registered after the server's cleanup, so it runs first: a failure
	// before the release below ends the test instead of leaving Close
	// waiting for the blocked handler.
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock)
	c := h2Client(t, in)
	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := c.Get(in.url("/"))
		if err != nil {
			got <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- result{string(b), err}
	}()
	<-entered
	shutdown := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), h2AttackBound)
		defer cancel()
		shutdown <- srv.Shutdown(ctx)
	}()
	select {
	case err := <-shutdown:
		t.Fatalf("Shutdown returned (%v) while a request was in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	unblock()
	if r := <-got; r.err != nil || r.body != "finished" {
		t.Fatalf("in-flight request: %q %v, want it to finish", r.body, r.err)
	}
	if err := <-shutdown; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []riptide.ConnState{riptide.StateNew, riptide.StateActive, riptide.StateClosed}; !slices.Equal(states, want) {
		t.Errorf("ConnState saw %v, want %v", states, want)
	}
	if _, err := (&http.Client{Timeout: 5 * time.Second}).Get(in.url("/")); err == nil {
		t.Error("a new connection was served after Shutdown")
	}
}

// TestH2Disable checks that HTTP2Config.Disable leaves TLS clients on
// HTTP/1.1 and turns h2c off.
func TestH2Disable(t *testing.T) {
	t.Parallel()
	srv := &riptide.Server{
		Handler:   riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString(h2HelloBody) }),
		HTTP2:     &riptide.HTTP2Config{Disable: true, H2C: true},
		TLSConfig: h2TestServerTLS(t),
		Logger:    slog.New(slog.DiscardHandler),
	}
	ts := riptide.ServeTest(t, srv, riptide.TestServeOptions{TLS: true})
	tr := &http.Transport{TLSClientConfig: h2TestClientTLS(t), ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Get("https://" + ts.Addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 1 {
		t.Errorf("with HTTP/2 disabled a client offering h2 got %s, want HTTP/1.1", resp.Proto)
	}
}

// TestH2MaxRequestBodySize checks that Server.MaxRequestBodySize holds over
// HTTP/2 for both APIs: 413 for a larger declared length.
func TestH2MaxRequestBodySize(t *testing.T) {
	t.Parallel()
	app := newH2App(t)
	for name, h := range map[string]riptide.Handler{
		"native": app.nativeHandler(),
		"compat": riptide.FromHTTP(app.stdHandler()),
	} {
		t.Run(name, func(t *testing.T) {
			in, _ := startRiptideH2(t, h, func(s *riptide.Server) { s.MaxRequestBodySize = 10 })
			c := h2Client(t, in)
			resp, err := c.Post(in.url("/"), "text/plain", strings.NewReader(strings.Repeat("x", 100)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 413 || resp.ProtoMajor != 2 {
				t.Errorf("100-byte body over a 10-byte limit: %s %d, want HTTP/2 413", resp.Proto, resp.StatusCode)
			}
		})
	}
}

// TestH2SetBodyLimit checks that Ctx.SetBodyLimit holds over HTTP/2 as over
// HTTP/1.1 (TestSetBodyLimit): a body past the per-request limit fails with
// ErrBodyTooLarge and the unanswered request gets 413.
func TestH2SetBodyLimit(t *testing.T) {
	t.Parallel()
	h := riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetBodyLimit(10)
		body, err := c.ReadBody()
		if err != nil {
			if err != riptide.ErrBodyTooLarge {
				t.Errorf("ReadBody error %v, want ErrBodyTooLarge", err)
			}
			return
		}
		c.Write(body)
	})
	in, _ := startRiptideH2(t, h, nil)
	c := h2Client(t, in)
	for _, tc := range []struct {
		body string
		code int
	}{
		{"0123456789", 200},
		{strings.Repeat("x", 100), 413},
	} {
		resp, err := c.Post(in.url("/"), "text/plain", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || tc.code == 200 && string(got) != tc.body {
			t.Errorf("%d-byte body, limit 10: %d %q, want %d", len(tc.body), resp.StatusCode, got, tc.code)
		}
	}
}
