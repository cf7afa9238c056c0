package client_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/client"
	"github.com/riptide-http/riptide/internal/israce"
)

// h2cHello starts riptide's server over h2c with a native handler that
// allocates nothing per request, so that testing.AllocsPerRun, which counts
// the whole process, measures the client.
func h2cHello(t testing.TB) (addr string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hello := []byte("Hello, World!")
	srv := &riptide.Server{
		Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
			x.SetContentType("text/plain")
			x.Write(hello)
		}),
		HTTP2: &riptide.HTTP2Config{H2C: true},
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestH2AllocsNative: the native API over HTTP/2 (h2c) allocates nothing
// per request once the connection is up, GET and POST alike.
func TestH2AllocsNative(t *testing.T) {
	if israce.Enabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	addr := h2cHello(t)
	c := &client.Client{H2CHosts: []string{addr}}
	defer c.CloseIdleConnections()
	var req client.Request
	var resp client.Response
	req.SetURL("http://" + addr + "/plaintext")
	req.AddHeader("Accept", "text/plain")
	ctx := context.Background()
	do := func() {
		if err := c.Do(ctx, &req, &resp); err != nil || string(resp.Body()) != "Hello, World!" || resp.ProtoMajor() != 2 {
			t.Fatalf("Do: %v %q", err, resp.Body())
		}
	}
	for range 10 {
		do()
	}
	if n := testing.AllocsPerRun(1000, do); n != 0 {
		t.Errorf("native HTTP/2 GET: %v allocs/op, want 0", n)
	}
	var post client.Request
	post.SetURL("http://" + addr + "/echo")
	post.SetMethod("POST")
	post.SetBodyString("some request body")
	doPost := func() {
		if err := c.Do(ctx, &post, &resp); err != nil || resp.StatusCode() != 200 {
			t.Fatalf("Do POST: %v %d", err, resp.StatusCode())
		}
	}
	for range 10 {
		doPost()
	}
	if n := testing.AllocsPerRun(1000, doPost); n != 0 {
		t.Errorf("native HTTP/2 POST: %v allocs/op, want 0", n)
	}
}

// TestH2AllocsRoundTrip: http.Client's RoundTrip over HTTP/2 through the
// client stays within 10 allocations per request; net/http's Transport,
// speaking h2c to the same server, is measured in the same run.
func TestH2AllocsRoundTrip(t *testing.T) {
	if israce.Enabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	addr := h2cHello(t)
	url := "http://" + addr + "/plaintext"
	measure := func(rt http.RoundTripper) float64 {
		req, _ := http.NewRequest("GET", url, nil)
		rt1 := func() {
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ProtoMajor != 2 {
				t.Fatalf("RoundTrip: %s, want HTTP/2", resp.Proto)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		for range 10 {
			rt1()
		}
		return testing.AllocsPerRun(500, rt1)
	}
	std := &http.Transport{Protocols: new(http.Protocols)}
	std.Protocols.SetUnencryptedHTTP2(true)
	defer std.CloseIdleConnections()
	ours := &client.Client{H2CHosts: []string{addr}}
	defer ours.CloseIdleConnections()
	n, m := measure(std), measure(ours)
	t.Logf("allocs/op of RoundTrip over HTTP/2 (h2c): net/http Transport %.0f, riptide %.0f", n, m)
	if m > 10 {
		t.Errorf("riptide RoundTrip over HTTP/2: %.0f allocs/op, want at most 10", m)
	}
}
