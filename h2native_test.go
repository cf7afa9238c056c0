package riptide_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// TestH2NativeFeatures checks that the native API keeps its semantics over
// HTTP/2 (h2c and TLS): streaming with Flush, trailers, unknown-length
// request bodies, panics (500 before anything was sent, a reset stream
// after), Hijack refused, Done on client cancel, the request view.
func TestH2NativeFeatures(t *testing.T) {
	t.Parallel()
	doneSeen := make(chan struct{}, 1)
	handler := riptide.HandlerFunc(func(c *riptide.Ctx) {
		switch string(c.Path()) {
		case "/stream":
			for i := range 3 {
				c.WriteString("event " + string(rune('0'+i)) + "\n")
				if err := c.Flush(); err != nil {
					return
				}
			}
		case "/trailer":
			c.SetTrailer("X-Checksum", "abc")
			c.WriteString("body")
		case "/echo":
			b, err := c.ReadBody()
			if err != nil {
				c.SetStatus(500)
				return
			}
			c.Write(b)
		case "/panic-early":
			panic("boom")
		case "/panic-late":
			c.WriteString(strings.Repeat("x", 100))
			c.Flush()
			panic(riptide.ErrAbortHandler)
		case "/hijack":
			if _, _, err := c.Hijack(); errors.Is(err, riptide.ErrHijackHTTP2) {
				c.WriteString("refused")
			}
		case "/done":
			<-c.Done()
			doneSeen <- struct{}{}
		case "/view":
			c.SetHeader("Content-Type", "text/plain")
			c.WriteString(string(c.Method()) + " " + string(c.Path()) + " " + string(c.QueryArg("q")) +
				" " + string(c.Header("X-Test")) + " " + string(c.Host()))
		}
	})
	for _, useTLS := range []bool{false, true} {
		in := startRiptideTarget(t, "native-features", handler, useTLS)
		t.Run(in.mode(), func(t *testing.T) {
			c := h2Client(t, in)
			get := func(path string) (*http.Response, string, error) { return getBody(c, in.url(path)) }
			if resp, b, err := get("/stream"); err != nil || b != "event 0\nevent 1\nevent 2\n" || resp.ProtoMajor != 2 {
				t.Errorf("stream: %q %v", b, err)
			}
			if resp, b, err := get("/trailer"); err != nil || b != "body" || resp.Trailer.Get("X-Checksum") != "abc" {
				t.Errorf("trailer: %q %v trailer=%v", b, err, resp.Trailer)
			}
			// An io.Reader of unknown length: no Content-Length, so the
			// body is read to the end of the stream.
			payload := strings.Repeat("0123456789", 10000)
			resp, err := c.Post(in.url("/echo"), "text/plain", io.MultiReader(strings.NewReader(payload)))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(got) != payload {
				t.Errorf("unknown-length echo: %d bytes back, want %d", len(got), len(payload))
			}
			if resp, _, err := get("/panic-early"); err != nil || resp.StatusCode != 500 {
				t.Errorf("panic before writing: %v %v, want 500", resp, err)
			}
			if _, b, err := get("/panic-late"); err == nil {
				t.Errorf("panic after writing: got a complete body (%d bytes), want a reset stream", len(b))
			}
			if _, b, err := get("/hijack"); err != nil || b != "refused" {
				t.Errorf("hijack: %q %v, want ErrHijackHTTP2", b, err)
			}
			if _, b, err := get("/view?q=a%20b"); err != nil || b != "GET /view a b  "+in.addr {
				t.Errorf("request view: %q %v", b, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", in.url("/done"), nil)
			go func() { time.Sleep(50 * time.Millisecond); cancel() }()
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
			}
			select {
			case <-doneSeen:
			case <-time.After(30 * time.Second):
				t.Error("Done was not closed after the client cancelled the stream")
			}
			// The connection still serves after all that.
			if _, b, err := get("/view"); err != nil || !strings.HasPrefix(b, "GET /view") {
				t.Errorf("after: %q %v", b, err)
			}
		})
	}
}

// BenchmarkH2 measures one GET / "Hello, World!" round trip over h2c on one
// multiplexed connection, for the native door, the compat door and
// net/http, with allocations. The client (Go's, in process) is the same for
// all three, so the differences are the servers'.
//
//	go test -run '^$' -bench BenchmarkH2 -benchmem
func BenchmarkH2(b *testing.B) {
	for _, target := range h2Targets {
		b.Run(target.name, func(b *testing.B) {
			in := startH2(b, target, false)
			c := h2Client(b, in)
			url := in.url("/")
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				resp, err := c.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
